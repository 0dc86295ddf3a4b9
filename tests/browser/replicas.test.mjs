// The dashboard against two allotd replicas on one PostgreSQL database (docs/ha.md): signed in at
// the leader, it follows a failover to the other replica, which lets in pages from its sibling's
// origin and no other. Needs ALLOT_TEST_POSTGRES_URL (scripts/with-postgres.sh); without it the
// test is skipped, unless ALLOT_REQUIRE_POSTGRES=1. Env as in support.mjs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ALLOTD, CHROMIUM, SHOTS, WEB_DIR, eventually, freePort, launchChromium, stopAll } from './support.mjs';

const POSTGRES = process.env.ALLOT_TEST_POSTGRES_URL;
const skip = !POSTGRES && process.env.ALLOT_REQUIRE_POSTGRES !== '1' ? 'no PostgreSQL (scripts/with-postgres.sh)' : false;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'allot-replicas-'));
const adminKey = `allot_${crypto.randomBytes(20).toString('hex')}`;
const LEASE_MS = 3000;
const replicas = []; // { url, child, dataDir }
let browser;
let page;
let hostile; // A web server of another origin.

function startReplica(i, database) {
  const r = replicas[i];
  const out = fs.openSync(path.join(dir, `allotd-${i}.log`), 'w');
  r.child = spawn(ALLOTD, ['--store', 'postgres', '--postgres-url', database, '--listen', `127.0.0.1:${r.port}`, '--advertise-url', r.url,
    '--lease-ms', String(LEASE_MS), '--data-dir', r.dataDir, '--web-dir', WEB_DIR, '--log-level', 'warn'],
  { env: { ...process.env, ALLOT_ADMIN_KEY: adminKey }, stdio: ['ignore', out, out] });
}

async function readiness(i) {
  const res = await fetch(`${replicas[i].url}/readyz`, { signal: AbortSignal.timeout(2000) });
  return { status: res.status, body: await res.json() };
}

async function call(i, method, target, body) {
  const res = await fetch(replicas[i].url + target, {
    method,
    headers: { Authorization: `Bearer ${adminKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    redirect: 'manual',
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${target}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

async function tenantsShown() {
  await page.waitForSelector('[data-testid=tenants-table] tbody tr');
  return page.locator('[data-testid=tenants-table]').textContent();
}

before(async () => {
  if (skip) return;
  assert.ok(POSTGRES, 'ALLOT_REQUIRE_POSTGRES=1 but ALLOT_TEST_POSTGRES_URL is not set');
  for (const [what, file] of [['allotd', ALLOTD], ['chromium', CHROMIUM], ['web/dist/index.html', path.join(WEB_DIR, 'index.html')]]) {
    assert.ok(fs.existsSync(file), `${what} is missing: ${file}`);
  }
  const name = `allot_browser_${process.pid}`;
  const made = spawnSync('psql', [POSTGRES, '-q', '-c', `CREATE DATABASE ${name}`], { encoding: 'utf8' });
  assert.equal(made.status, 0, `CREATE DATABASE failed: ${made.stderr}`);
  const database = new URL(POSTGRES);
  database.pathname = `/${name}`;
  for (let i = 0; i < 2; ++i) {
    const port = await freePort();
    replicas.push({ port, url: `http://127.0.0.1:${port}`, dataDir: path.join(dir, `data-${i}`) });
  }
  startReplica(0, database.toString());
  await eventually('replica 0 to lead', async () => (await readiness(0)).status === 200, 30000);
  // Every replica shares the secrets key the first one made.
  fs.mkdirSync(replicas[1].dataDir, { recursive: true });
  fs.copyFileSync(path.join(replicas[0].dataDir, 'secrets.key'), path.join(replicas[1].dataDir, 'secrets.key'));
  startReplica(1, database.toString());
  await eventually('replica 1 to follow', async () => (await readiness(1)).body.role === 'follower', 30000);
  await call(0, 'POST', '/v1/tenants', { name: 'before-failover' });

  hostile = http.createServer((_, res) => res.end('<!doctype html><title>elsewhere</title>'));
  await new Promise((r) => hostile.listen(0, '127.0.0.1', r));

  browser = await launchChromium(path.join(dir, 'chromium'));
  page = browser.pages()[0] ?? (await browser.newPage());
  page.setDefaultTimeout(15000);
  page.on('pageerror', (e) => console.error('page error:', e.message));
});

after(async () => {
  await browser?.close().catch(() => undefined);
  hostile?.close();
  await stopAll(replicas.map((r) => r.child));
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('dashboard on replicas', { skip }, () => {
  it('lists the replicas and lets in pages from their origins only', async () => {
    const [a, b] = replicas.map((r) => r.url);
    // The leader reads who announced themselves at each renewal of its lease.
    await eventually('the leader to list both replicas', async () => JSON.stringify([...(await readiness(0)).body.replicas].sort()) === JSON.stringify([a, b].sort()));
    // The follower lets a page of the leader's origin read it, and a preflight of it through.
    const read = await fetch(`${b}/readyz`, { headers: { Origin: a } });
    assert.equal(read.headers.get('access-control-allow-origin'), a);
    const preflight = await fetch(`${b}/v1/tenants`, { method: 'OPTIONS', headers: { Origin: a, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type' } });
    assert.equal(preflight.status, 204);
    assert.match(preflight.headers.get('access-control-allow-headers'), /Authorization/);
    assert.equal(preflight.headers.get('access-control-allow-credentials'), null);
    // Another origin gets a refused preflight and answers it cannot read.
    const elsewhere = `http://127.0.0.1:${hostile.address().port}`;
    const refused = await fetch(`${a}/v1/tenants`, { method: 'OPTIONS', headers: { Origin: elsewhere, 'Access-Control-Request-Method': 'GET' } });
    assert.equal(refused.status, 403);
    assert.equal((await refused.json()).error.code, 'forbidden');
    assert.equal(refused.headers.get('access-control-allow-origin'), null);
    assert.equal((await fetch(`${a}/readyz`, { headers: { Origin: elsewhere } })).headers.get('access-control-allow-origin'), null);
    // Nor does a page served from an instance's port, which runs sandboxed as the origin "null".
    const sandboxed = await fetch(`${b}/v1/tenants`, { method: 'OPTIONS', headers: { Origin: 'null', 'Access-Control-Request-Method': 'GET' } });
    assert.equal(sandboxed.status, 403);
    // A page there that holds a stolen key still cannot call the API from the browser.
    const tab = await browser.newPage();
    await tab.goto(elsewhere);
    const outcome = await tab.evaluate(async ([url, key]) => {
      try {
        const res = await fetch(`${url}/v1/tenants`, { headers: { Authorization: `Bearer ${key}` } });
        return `read ${res.status}`;
      } catch (e) {
        return `blocked: ${e.name}`;
      }
    }, [a, adminKey]);
    assert.equal(outcome, 'blocked: TypeError');
    await tab.close();
  });

  it('refuses a list of servers that are not URLs, and signs in with one', async () => {
    const [a, b] = replicas.map((r) => r.url);
    await page.goto(`${a}/#/login`);
    await page.click('details.servers summary');
    await page.fill('[data-testid=key-input]', adminKey);
    await page.fill('[data-testid=servers-input]', `${a}, allot-b:8080`);
    await page.click('[data-testid=sign-in]');
    await eventually('the error', async () => /not an http or https URL: allot-b:8080/.test(await page.locator('[data-testid=signin-error]').textContent()));
    assert.equal(await page.locator('[data-testid=whoami]').count(), 0);
    await page.fill('[data-testid=servers-input]', `${a}, ${b}/`);
    await page.click('[data-testid=sign-in]');
    await page.waitForSelector('[data-testid=whoami]');
    assert.equal(await page.evaluate(() => localStorage.getItem('allot.servers')), `${a},${b}`);
    await page.goto(`${a}/#/tenants`);
    assert.ok((await tenantsShown()).includes('before-failover'));
  });

  it('follows the leader when it is killed, reading and writing at the new one', async () => {
    const [, b] = replicas.map((r) => r.url);
    replicas[0].child.kill('SIGKILL');
    await eventually('replica 1 to lead', async () => (await readiness(1)).status === 200, 15000);
    await call(1, 'POST', '/v1/tenants', { name: 'after-failover' });
    // The page came from the replica that is gone; its next refresh finds the new leader.
    await eventually('the tenants page to show the new leader\'s tenant', async () => (await tenantsShown()).includes('after-failover'), 30000);
    await eventually('the console to say which replica it calls', async () => (await page.locator('[data-testid=server]').textContent()).includes(b));
    // A write from the page goes to the new leader too, across origins.
    await page.fill('[data-testid=tenant-name]', 'made-in-the-browser');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await eventually('the tenant made through the new leader', async () => (await call(1, 'GET', '/v1/tenants?limit=1000')).items.some((t) => t.name === 'made-in-the-browser'));
    fs.mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, '20-replicas-after-failover.png'), fullPage: true });
  });
});
