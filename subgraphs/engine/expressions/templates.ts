/**
 * Where the `{{ … }}` are in a parameter's text (engine.ts): text and expression segments.
 */

export type Segment = { text: string } | { expr: string };

const templates = new Map<string, Segment[] | null>();

/** The segments of a string holding `{{ … }}`, or null when it holds none. */
export function parseTemplate(source: string): Segment[] | null {
  const cached = templates.get(source);
  if (cached !== undefined) return cached;
  const parsed = source.includes('{{') ? splitTemplate(source) : null;
  if (templates.size > 10_000) templates.clear();
  templates.set(source, parsed);
  return parsed;
}

function splitTemplate(s: string): Segment[] | null {
  const out: Segment[] = [];
  let text = '';
  let i = 0;
  while (i < s.length) {
    if (s[i] === '{' && s[i + 1] === '{') {
      const end = findClose(s, i + 2);
      if (end < 0) {
        text += s.slice(i);
        break;
      }
      if (text) out.push({ text });
      text = '';
      out.push({ expr: s.slice(i + 2, end).trim() });
      i = end + 2;
    } else {
      text += s[i];
      i++;
    }
  }
  if (text) out.push({ text });
  return out.some((seg) => 'expr' in seg) ? out : null;
}

/** The index of the `}}` closing an expression, skipping braces inside literals and nested objects. */
function findClose(s: string, from: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '{') depth++;
    else if (c === '}') {
      if (depth === 0 && s[i + 1] === '}') return i;
      if (depth > 0) depth--;
    }
  }
  return -1;
}
