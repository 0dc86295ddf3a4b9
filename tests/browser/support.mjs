// What the browser tests share: where the binaries are, waiting for a condition, stopping the
// processes they started, and headless Chromium. Env: ALLOTD, ALLOT_CLI, ALLOT_AGENT (binaries),
// ALLOT_WEB_DIR (built dashboard), ALLOT_SCREENSHOT_DIR (PNGs), CHROMIUM (default /usr/bin/chromium).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(path.join(root, 'web/package.json'));
const { chromium } = require('playwright-core');

const bin = (env, rel) => path.resolve(root, process.env[env] ?? rel);
export const ALLOTD = bin('ALLOTD', 'build/debug/src/daemon/allotd');
export const AGENT = bin('ALLOT_AGENT', 'build/debug/src/agent/allot-agent');
export const WEB_DIR = bin('ALLOT_WEB_DIR', 'web/dist');
export const SHOTS = bin('ALLOT_SCREENSHOT_DIR', 'tests/browser/screenshots');
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function eventually(what, fn, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(150);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`);
}

// SIGTERM, then SIGKILL after 5 s, for each child still running.
export async function stopAll(children) {
  for (const child of children) {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([new Promise((r) => child.once('exit', r)), sleep(5000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }
}

// Headless Chromium with its profile in `profileDir`, at a common laptop-to-desktop width: every
// table must keep its key columns in view at it.
export function launchChromium(profileDir) {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    viewport: { width: 1400, height: 1000 },
    timeout: 30000,
  });
}

// A TCP port free on loopback now (something binds it a moment later).
export async function freePort() {
  const server = net.createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

// The whole of `page` as SHOTS/NAME.png.
export async function screenshot(page, name) {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}
