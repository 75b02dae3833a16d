import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DASHBOARD_DIR } from '../../gateway/dashboard';
import { startFakeLlm, type FakeLlm } from './fake-llm';
import { startTestPlatform, type TestPlatform } from './platform';

/**
 * A platform with a fake LLM and a headless Chromium page on it, as the browser tests use them:
 * every console error and page exception is collected (a test asserts there were none), and
 * screenshots go to test-screenshots/ (git-ignored) for a reviewer.
 */

export const SHOTS = path.join(__dirname, '..', '..', '..', 'test-screenshots');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface BrowserPlatform {
  p: TestPlatform;
  fake: FakeLlm;
  browser: Browser;
  page: Page;
  /** Errors logged on the page since the last `noPageErrors`. */
  consoleErrors: string[];
  /**
   * A name whose tasks' model calls wait (a prompt holding `HOLD:<name>`) until `release`;
   * `reached` tells that one did.
   */
  hold(name: string): string;
  holds: Map<string, { release: () => void; promise: Promise<void>; reached: boolean }>;
  /** A screenshot of the page; `fullPage: false` for pages too tall to render whole in time. */
  shot(name: string, fullPage?: boolean): Promise<Buffer>;
  /** Signs the page in with an API key and waits for the navigation. */
  signIn(key: string): Promise<void>;
  /** Asserts the page logged no error (a failed request, a React warning, an exception) and forgets them. */
  noPageErrors(): void;
  stop(): Promise<void>;
}

export async function startBrowserPlatform(env: Record<string, string> = {}): Promise<BrowserPlatform> {
  assert.ok(existsSync(path.join(DASHBOARD_DIR, 'index.html')), 'the dashboard is built (npm install runs `npm run build:dashboard`)');
  mkdirSync(SHOTS, { recursive: true });
  const holds: BrowserPlatform['holds'] = new Map();
  const fake = await startFakeLlm({ models: ['model-default'] });
  fake.reply(async (body: { messages: { content: unknown }[] }) => {
    const prompt = body.messages.map((m) => String(m.content)).join('\n');
    for (const [name, h] of holds) {
      if (prompt.includes(`HOLD:${name}`)) {
        h.reached = true;
        await h.promise;
      }
    }
    return JSON.stringify({ summary: 'Done.', files: [{ path: 'notes/result.md', content: '# Result\n\nDone.\n' }] });
  });
  const p = await startTestPlatform({ LLM_BASE_URL: fake.url, LLM_MODELS: 'model-default', ...env });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
  const consoleErrors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(`${m.text()} (${m.location().url})`));
  page.on('pageerror', (e) => consoleErrors.push(e.message));
  return {
    p,
    fake,
    browser,
    page,
    consoleErrors,
    holds,
    hold(name) {
      let release!: () => void;
      const promise = new Promise<void>((r) => (release = r));
      holds.set(name, { release, promise, reached: false });
      return name;
    },
    shot: (name, fullPage = true) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage }),
    async signIn(key) {
      await page.goto(`${p.url}/dashboard`);
      await page.getByTestId('signin-key').fill(key);
      await page.getByTestId('signin-submit').click();
      await page.getByTestId('nav-agents').or(page.getByTestId('nav-prompts')).or(page.getByTestId('nav-feedback')).first().waitFor();
    },
    noPageErrors: () => assert.deepEqual(consoleErrors.splice(0), [], 'errors on the page'),
    async stop() {
      for (const h of holds.values()) h.release();
      await browser.close();
      await p.stop();
      await fake.close();
    },
  };
}
