// The dashboard on a phone: at 390 × 844 px no page scrolls sideways (a wide table may scroll
// inside its own box), for the operator and for a tenant, and the menu still reaches every page.
// allotd serves web/dist with one agent that simulates GPUs, as in dashboard.test.mjs. Run:
//   node --test tests/browser/phone.test.mjs
// Env as in support.mjs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AGENT, ALLOTD, CHROMIUM, SHOTS, WEB_DIR, eventually, freePort, launchChromium, screenshot, stopAll } from './support.mjs';

const PHONE = { width: 390, height: 844 };
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'allot-phone-'));
const adminKey = `allot_${crypto.randomBytes(20).toString('hex')}`;
const procs = [];
let url = '';
let browser;
let page;
const s = {}; // ids and keys made in before()

function start(cmd, args, name, env = {}) {
  const out = fs.openSync(path.join(dir, `${name}.log`), 'w');
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', out, out] });
  procs.push(child);
  return child;
}

async function call(method, target, body, key = adminKey) {
  const res = await fetch(url + target, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${target}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const shot = (name) => screenshot(page, name);

async function signIn(key) {
  await page.goto(`${url}/#/login`);
  await page.fill('[data-testid=key-input]', key);
  await page.click('[data-testid=sign-in]');
  await page.waitForURL(/#\/overview/);
  await page.locator('.main .page').waitFor();
}

// Every route of the dashboard (web/src/main.ts) with what shows once its data is in.
function routes(operator) {
  return [
    ['overview', '[data-testid=recent-instances] table'],
    ['fleet', operator ? '[data-testid=gpu-cell]' : '[data-testid=fleet-operator-only]'],
    ['instances', '[data-testid=instances-table] tbody tr'],
    [`instances/${s.run}`, '[data-testid=instance-events] tr'],
    ['tenants', '[data-testid=tenants-table] tbody tr'],
    ['volumes', '[data-testid=volumes-table] tbody tr'],
    ['services', '[data-testid=services-table] tbody tr'],
    [`services/${s.service}`, '[data-testid=service-kpis] .kpi'],
    ['usage', '[data-testid=budgets-table] tbody tr'],
    ['invoices', '[data-testid=invoices-table] tbody tr'],
    [`invoices/${s.invoice}`, '[data-testid=invoice-total]'],
    ['prices', '[data-testid=regions] table'],
    ['finance', operator ? '[data-testid=pnl-table] tbody tr' : '[data-testid=finance-operator-only]'],
  ];
}

// Opens each route and returns how far each page runs past the window's right edge, if it does.
async function overflows(who, operator) {
  const found = [];
  for (const [route, ready] of routes(operator)) {
    await page.goto(`${url}/#/${route}`);
    await page.locator(ready).first().waitFor();
    // Charts draw on the next frame: measure after it.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const [wide, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    if (wide > inner) found.push(`${who} #/${route} is ${wide} px wide, ${wide - inner} px past ${inner}`);
    if (route === 'overview') await shot(`phone-${who}-overview`);
  }
  return found;
}

before(async () => {
  for (const [what, file] of [['allotd', ALLOTD], ['allot-agent', AGENT], ['chromium', CHROMIUM], ['web/dist/index.html', path.join(WEB_DIR, 'index.html')]]) {
    assert.ok(fs.existsSync(file), `${what} is missing: ${file} (build it; for the dashboard: bash scripts/web.sh)`);
  }
  const portFile = path.join(dir, 'port');
  start(ALLOTD, ['--listen', '127.0.0.1:0', '--port-file', portFile, '--data-dir', path.join(dir, 'data'), '--web-dir', WEB_DIR,
    '--heartbeat-interval-ms', '300', '--stop-grace-ms', '500', '--log-level', 'warn', '--process-runtime-tenants', 'all'],
  'allotd', { ALLOT_ADMIN_KEY: adminKey });
  const port = await eventually('allotd to write its port', () => fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').trim());
  url = `http://127.0.0.1:${port}`;
  await eventually('allotd to be ready', async () => (await fetch(`${url}/readyz`)).ok);

  // One tenant with a key, a price, and one node: enough for every page to have rows to show.
  const acme = await call('POST', '/v1/tenants', { name: 'acme-corporation-research' });
  const vision = await call('POST', '/v1/projects', { name: 'vision', tenant_id: acme.id });
  const ann = await call('POST', '/v1/users', { name: 'Ann', email: 'ann.longname@acme-corporation.example', role: 'tenant-admin', tenant_id: acme.id });
  s.annKey = (await call('POST', '/v1/keys', { name: 'phone', user_id: ann.id })).secret;
  await call('PUT', '/v1/prices', { gpu_model: 'H100-80GB', region: 'default', gpu_hour: '2.50' });
  const token = (await call('POST', '/v1/join-tokens', { name: 'phone-test' })).token;
  start(AGENT, ['--server', url, '--join-token', token, '--state-dir', path.join(dir, 'node-a'), '--name', 'node-a',
    '--simulate', '8xH100-80GB', '--runtime', 'process', '--log-level', 'warn'], 'node-a');
  await eventually('the node to be ready', async () => (await call('GET', '/v1/nodes')).items.some((n) => n.state === 'ready'));
  await call('PUT', '/v1/finance/sites/default', { pue: '1.25', colocation_per_kw_month: '180' });
  await call('POST', '/v1/finance/sites/default/power-prices', { price_per_kwh: '0.14' });
  await call('POST', '/v1/finance/assets', {
    name: 'rack 1', nodes: ['node-a'], cost: '240000.00', in_service: `${new Date().toISOString().slice(0, 7)}-01T00:00:00Z`,
    life_months: 48, power_kw: '6',
  });

  // Finished work to invoice, work that keeps running, a volume, a service and a budget.
  const done = await call('POST', '/v1/instances', { command: ['sh', '-c', 'echo done'], gpus: 1, project_id: vision.id }, s.annKey);
  await eventually('the first instance to end', async () => (await call('GET', `/v1/instances/${done.id}`)).state === 'succeeded');
  s.run = (await call('POST', '/v1/instances', {
    command: ['sh', '-c', 'echo a rather long line of output that a narrow screen has to wrap somewhere; sleep 600'], gpus: 2, interactive: true, project_id: vision.id,
  }, s.annKey)).id;
  await eventually('the instance to run', async () => (await call('GET', `/v1/instances/${s.run}`)).state === 'running');
  s.invoice = (await call('POST', '/v1/invoices', { tenant_id: acme.id, month: new Date().toISOString().slice(0, 7) })).id;
  await call('POST', '/v1/volumes', { name: 'checkpoints', size_gb: 100 }, s.annKey);
  const servicePort = await freePort();
  s.service = (await call('POST', '/v1/services', {
    name: 'web', port: servicePort, min_replicas: 1, max_replicas: 1,
    replica: { gpus: 1, command: ['python3', '-m', 'http.server', String(servicePort)] },
  }, s.annKey)).id;
  await call('PUT', '/v1/budgets', { tenant_id: acme.id, amount: '1000', thresholds_pct: [50, 100] });

  browser = await launchChromium(path.join(dir, 'chromium'));
  page = browser.pages()[0] ?? (await browser.newPage());
  page.setDefaultTimeout(15000);
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.setViewportSize(PHONE);
});

after(async () => {
  await browser?.close().catch(() => undefined);
  if (s.service) await call('DELETE', `/v1/services/${s.service}`, undefined, s.annKey).catch(() => undefined);
  if (s.run) await call('POST', `/v1/instances/${s.run}/stop`).catch(() => undefined);
  await stopAll([...procs].reverse());
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('dashboard on a phone', () => {
  it('no page scrolls sideways at 390 px, for the operator and for a tenant', async () => {
    await signIn(adminKey);
    const found = await overflows('operator', true);
    await signIn(s.annKey);
    found.push(...(await overflows('tenant', false)));
    assert.deepEqual(found, [], `pages wider than the phone:\n${found.join('\n')}`);
  });

  it('the menu opens, reaches another page and closes', async () => {
    await page.goto(`${url}/#/overview`);
    await page.locator('[data-testid=recent-instances] table').waitFor();
    const fleet = page.locator('[data-nav=fleet]');
    assert.equal(await fleet.isVisible(), false, 'the menu starts closed on a phone');
    await page.click('[data-testid=menu]');
    await fleet.click();
    await page.waitForURL(/#\/fleet$/);
    await page.locator('[data-testid=fleet-operator-only]').waitFor();
    assert.equal(await fleet.isVisible(), false, 'the menu closes once a page is picked');
    await page.click('[data-testid=menu]');
    assert.ok(await page.locator('[data-testid=sign-out]').isVisible(), 'sign out is in the menu');
    await shot('phone-menu-open');
  });
});
