import type { ExtensionTable, Lib } from './types';

/**
 * n8n's string extensions (docs.n8n.io, "Data transformation functions: strings"), written for
 * the expression prelude. Like every table of the prelude, this function's source text runs in
 * the sandbox: it must not reference anything outside its body except `lib`.
 *
 * Each extension gets the string and the call's arguments as a list (`'a'.quote("'")` calls
 * `quote('a', ["'"])`).
 */
export function stringExtensions(lib: Lib): ExtensionTable<string> {
  // n8n strips currency symbols (xe.com's list, in its order: the first that matches wins) before
  // reading a number.
  const CURRENCIES = [
    'Lek',
    '؋',
    '$',
    'ƒ',
    '₼',
    'Br',
    'BZ$',
    '$b',
    'KM',
    'P',
    'лв',
    'R$',
    '៛',
    '¥',
    '₡',
    'kn',
    '₱',
    'Kč',
    'kr',
    'RD$',
    '£',
    '€',
    '¢',
    'Q',
    'L',
    'Ft',
    '₹',
    'Rp',
    '﷼',
    '₪',
    'J$',
    '₩',
    '₭',
    'ден',
    'RM',
    '₨',
    '₮',
    'MT',
    'C$',
    '₦',
    'B/.',
    'Gs',
    'S/.',
    'zł',
    'lei',
    '₽',
    'Дин.',
    'S',
    'R',
    'CHF',
    'NT$',
    '฿',
    'TT$',
    '₺',
    '₴',
    '$U',
    'Bs',
    '₫',
    'Z$',
  ];
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const CURRENCY = new RegExp(CURRENCIES.map(escape).join('|'), 'gu');
  const noCurrency = (s: string) => s.replace(CURRENCY, '');

  // Host names as n8n recognises them: dotted labels ending in a 2+ letter (or punycode) top level, localhost, IPv4.
  const HOST = String.raw`(?:[-\w]+\.)+(?:[a-zA-Z]{2,}|xn--[a-zA-Z0-9]+)|localhost|\d{1,3}(?:\.\d{1,3}){3}`;
  const AFTER_HOST = String.raw`(?::\d+)?(?:\/[^\s?]*)?(?:\?[^\s#]*)?(?:#\S*)?`;
  // A URL is http(s) or ftp, a host, then anything up to whitespace.
  const URL_AT = String.raw`(?:https?|ftp):\/\/(?:www\.)?(?:${HOST})\S*`;
  const URL_EXACT = new RegExp(`^${URL_AT}$`, 'i');
  const URL_ANYWHERE = new RegExp(URL_AT, 'i');
  const DOMAIN_EXACT = new RegExp(String.raw`^(?:www\.)?(?:${HOST})${AFTER_HOST}$`, 'i');
  const DOMAIN_IN = new RegExp(String.raw`^(?:(?:https?|ftp):\/\/)?(?:mailto:)?(?:\/\/)?((?:www\.)?(?:${HOST}))${AFTER_HOST}$`, 'i');
  const ATOM = String.raw`[^<>()[\]\\.,;:\s@"]+`;
  const EMAIL = new RegExp(String.raw`(?:${ATOM}(?:\.${ATOM})*|".+")@(?<domain>\[\d{1,3}(?:\.\d{1,3}){3}\]|(?:[a-zA-Z\-0-9]+\.)+[a-zA-Z]{2,})`);

  const isEmail = (s: string) => EMAIL.test(s) && !s.includes(' ');

  function toInt(s: string, [radix]: [number?]) {
    const n = parseInt(noCurrency(s), radix);
    if (Number.isNaN(n)) lib.fail('cannot convert to integer');
    return n;
  }

  function toFloat(s: string) {
    if (s.includes(',')) lib.fail('cannot convert to float, expected . as decimal separator');
    const n = parseFloat(noCurrency(s));
    if (Number.isNaN(n)) lib.fail('cannot convert to float');
    return n;
  }

  // title-case's rules (the library n8n uses): words are runs without spaces, colons or dashes;
  // a word already holding capitals (or `x.y`), a small word other than the first or last, and a
  // word followed by `:` and no space (a URL scheme) are left as they are.
  const SMALL = new RegExp(
    `\\b(?:${'a an ad and as at because but by en for if in neither nor of on only or over per so some than that the to up upon v vs v. vs. versus via when with without yet'
      .split(' ')
      .map(escape)
      .join('|')})\\b`,
    'i',
  );
  function toTitleCase(s: string) {
    return s.replace(/[^\s:–—-]+|./g, (word, index: number) => {
      const next = s.charAt(index + word.length);
      const keep =
        /.(?=[A-Z]|\..)/.test(word) ||
        (SMALL.test(word) && index !== 0 && index + word.length !== s.length) ||
        (next === ':' && !/\s/.test(s.charAt(index + word.length + 1)));
      return keep ? word : word.replace(/[A-Za-z0-9\u00C0-\u00FF]/, (c) => c.toUpperCase());
    });
  }

  /** Each sentence (up to `.`, `!` or `?`) starts with a capital; every other letter is lowercased. */
  function toSentenceCase(s: string) {
    let out = '';
    let rest = s;
    for (let first = rest.search(/\p{L}/u); first >= 0; first = rest.search(/\p{L}/u)) {
      rest = rest.slice(0, first) + rest[first]!.toLocaleUpperCase() + rest.slice(first + 1).toLocaleLowerCase();
      const end = rest.search(/[!?.]/);
      if (end < 0) return out + rest;
      out += rest.slice(0, end + 1);
      rest = rest.slice(end + 1);
    }
    return out + rest;
  }

  // replaceSpecialChars: n8n transliterates every script (the transliteration library); here Latin
  // letters lose their accents and ligatures are spelled out. A character with no ASCII spelling
  // here fails the expression instead of silently differing from n8n.
  const LATIN: Record<string, string> = {
    ß: 'ss',
    Æ: 'AE',
    æ: 'ae',
    Œ: 'OE',
    œ: 'oe',
    Ø: 'O',
    ø: 'o',
    Đ: 'D',
    đ: 'd',
    Ð: 'D',
    ð: 'd',
    Þ: 'Th',
    þ: 'th',
    Ł: 'L',
    ł: 'l',
    Ħ: 'H',
    ħ: 'h',
    ı: 'i',
    ĸ: 'q',
    ŀ: 'l',
    Ŀ: 'L',
    ŉ: "'n",
    Ŋ: 'N',
    ŋ: 'n',
    ſ: 's',
    '‘': "'",
    '’': "'",
    '‚': "'",
    '“': '"',
    '”': '"',
    '„': '"',
    '–': '-',
    '—': '-',
    '…': '...',
    '\u00a0': ' ',
    '«': '<<',
    '»': '>>',
  };
  function replaceSpecialChars(s: string) {
    return s
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .replace(
        /[^\x00-\x7f]/gu,
        (c) => LATIN[c] ?? lib.fail(`replaceSpecialChars() cannot spell "${c}" in ASCII here (only Latin letters and common punctuation are transliterated)`),
      );
  }

  /** Markdown syntax goes, its text stays (lists, headings, emphasis, links, images, code, quotes, HTML tags). */
  function removeMarkdown(s: string) {
    return s
      .replace(/^([ \t]*)(?:[*+-]|\d+\.)[ \t]+/gm, '$1')
      .replace(/\n={2,}/g, '\n')
      .replace(/~~/g, '')
      .replace(/`{3}.*\n/g, '')
      .replace(/<[^>\n]+>/g, '')
      .replace(/^[=-]{2,}[ \t]*$/gm, '')
      .replace(/!\[[^\]]*\][([][^)\]]*[)\]]/g, '')
      .replace(/\[([^\]]*)\][([][^)\]]*[)\]]/g, '$1')
      .replace(/>/g, '')
      .replace(/^#{1,6}[ \t]*([^#\n]*?)[ \t]*#*$/gm, '$1')
      .replace(/([*_]{1,3})(\S.*?\S|\S)\1/g, '$2')
      .replace(/`([^`\n]+)`/g, '$1')
      .replace(/\n{2,}/g, '\n\n');
  }

  /** The path of an absolute URL as the WHATWG URL parser gives it (common cases), undefined when it is not one. */
  function extractUrlPath(s: string) {
    const m = /^([a-zA-Z][a-zA-Z\d+.-]*):([^?#]*)/s.exec(s.trim());
    if (!m) return undefined;
    const special = ['http', 'https', 'ftp', 'ws', 'wss', 'file'].includes(m[1]!.toLowerCase());
    const rest = special ? m[2]!.replace(/\\/g, '/') : m[2]!;
    if (!rest.startsWith('//')) return special ? undefined : rest.replace(/[\x00-\x1f\x7f-\u{10ffff}]/gu, encodeURIComponent);
    const slash = rest.indexOf('/', 2);
    const emptyHost = rest.length === 2 || slash === 2;
    if (emptyHost && special && m[1]!.toLowerCase() !== 'file') return undefined;
    const segments = slash < 0 ? [] : rest.slice(slash + 1).split('/');
    const path: string[] = [];
    segments.forEach((segment, i) => {
      const seg = segment.toLowerCase();
      const dots = seg === '.' || seg === '%2e' ? 1 : ['..', '.%2e', '%2e.', '%2e%2e'].includes(seg) ? 2 : 0;
      if (dots === 2) path.pop();
      if (dots && i === segments.length - 1) path.push('');
      if (!dots) path.push(segment);
    });
    return ('/' + path.join('/')).replace(/[\x00-\x20"<>`{}\x7f-\u{10ffff}]/gu, encodeURIComponent);
  }

  return {
    hash(s, [algorithm]: [string?]) {
      const name = (algorithm ?? 'md5').toLowerCase();
      if (name === 'base64') return lib.codec.base64(lib.codec.utf8(s));
      if (!['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512', 'sha3'].includes(name)) {
        lib.fail(`Unknown algorithm ${name}. Available algorithms are: md5,sha1,sha224,sha256,sha384,sha512,sha3, and Base64.`);
      }
      return lib.codec.digest(name as 'md5', lib.codec.utf8(s));
    },
    removeMarkdown,
    removeTags: (s) => s.replace(/<[^>]*>?/g, ''),
    toDate(s) {
      const date = new Date(Date.parse(s));
      if (Number.isNaN(date.getTime())) lib.fail('cannot convert to date');
      if (!s.includes(':')) date.setHours(0, 0, 0);
      return date;
    },
    toDateTime: (s, [format]: [string?]) => lib.stringToDateTime(s, format),
    toBoolean: (s) => s.length > 0 && !['false', 'no', '0'].includes(s.toLowerCase()),
    toDecimalNumber: toFloat,
    toNumber(s) {
      const n = Number(noCurrency(s));
      if (Number.isNaN(n)) lib.fail('cannot convert to number');
      return n;
    },
    toFloat,
    toInt,
    toWholeNumber: toInt,
    toSentenceCase,
    toSnakeCase: (s) =>
      s
        .toLocaleLowerCase()
        .replace(/[ -]/g, '_')
        .replace(/[\u2000-\u206F\u2E00-\u2E7F\\'!"#$%&()*+,./:;<=>?@[\]^`{|}~]/g, ''),
    toTitleCase,
    urlDecode(s, [all]: [boolean?]) {
      try {
        return all ? decodeURI(String(s)) : decodeURIComponent(String(s));
      } catch {
        return lib.fail(`urlDecode(): "${s}" is not valid URL encoding`);
      }
    },
    urlEncode: (s, [all]: [boolean?]) => (all ? encodeURI(String(s)) : encodeURIComponent(String(s))),
    quote(s, [mark = '"']: [string?]) {
      return (
        mark +
        s
          .replace(/\\/g, '\\\\')
          .split(mark)
          .join('\\' + mark) +
        mark
      );
    },
    replaceSpecialChars,
    length: (s) => s.length,
    isDomain: (s) => DOMAIN_EXACT.test(s),
    isEmail,
    isNumeric: (s) => !s.includes(' ') && !Number.isNaN(Number(s)) && !Number.isNaN(parseFloat(s)),
    isUrl: (s) => URL_EXACT.test(s),
    isEmpty: (s) => s === '',
    isNotEmpty: (s) => s !== '',
    isBlank: (s) => s.trim() === '',
    isNotBlank: (s) => s.trim() !== '',
    toJsonString: (s) => JSON.stringify(s),
    extractEmail: (s) => EMAIL.exec(s)?.[0],
    extractDomain(s) {
      if (isEmail(s)) return EMAIL.exec(s)?.groups?.domain;
      return DOMAIN_IN.exec(s)?.[1];
    },
    extractUrl: (s) => URL_ANYWHERE.exec(s)?.[0],
    extractUrlPath,
    parseJson(s) {
      try {
        return JSON.parse(s);
      } catch {
        return lib.fail(s.includes("'") ? "Parsing failed. Check you're using double quotes" : 'Parsing failed');
      }
    },
    base64Encode: (s) => lib.codec.base64(lib.codec.utf8(s)),
    base64Decode: (s) => lib.codec.fromUtf8(lib.codec.fromBase64(s)),
  };
}
