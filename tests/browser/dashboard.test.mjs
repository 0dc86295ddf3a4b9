// Browser tests of the dashboard: allotd serves web/dist (--web-dir) on loopback with agents that
// simulate GPUs; headless Debian Chromium drives the UI through playwright-core. Run:
//   node --test tests/browser/
// Env: ALLOTD, ALLOT_CLI, ALLOT_AGENT (binaries), ALLOT_WEB_DIR (built dashboard),
// ALLOT_SCREENSHOT_DIR (PNG of each page), CHROMIUM (default /usr/bin/chromium).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AGENT, ALLOTD, CHROMIUM, SHOTS, WEB_DIR, eventually, launchChromium, screenshot, sleep, stopAll } from './support.mjs';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'allot-browser-'));
const adminKey = `allot_${crypto.randomBytes(20).toString('hex')}`;
const procs = [];
let url = '';
let browser;
let page;
const s = {}; // ids and keys made in before()

function start(cmd, args, name, env = {}) {
  const out = fs.openSync(path.join(dir, `${name}.log`), 'w');
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', out, out] });
  procs.push({ name, child });
  return child;
}

async function call(method, target, body, key = adminKey, expect) {
  const res = await fetch(url + target, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  const json = text ? JSON.parse(text) : null;
  if (expect !== undefined ? res.status !== expect : res.status >= 300) {
    throw new Error(`${method} ${target}: ${res.status} ${text}`);
  }
  return json;
}

const shot = (name) => screenshot(page, name);

async function signIn(key) {
  await page.goto(`${url}/#/login`);
  await page.fill('[data-testid=key-input]', key);
  await page.click('[data-testid=sign-in]');
  await page.waitForSelector('[data-testid=whoami]');
}

async function signOut() {
  await page.click('[data-testid=sign-out]');
  await page.waitForSelector('[data-testid=key-input]');
}

async function go(route) {
  await page.goto(`${url}/#/${route}`);
}

// Fills the launch form (setUp picks the options), submits it and returns the new instance's id
// from the page it lands on.
async function launchFromForm(command, setUp) {
  await go('instances');
  await setUp();
  await page.fill('[data-testid=launch-command]', command);
  await page.click('[data-testid=launch-submit]');
  await page.waitForURL(/#\/instances\/ins_/);
  return page.url().split('/').pop();
}

before(async () => {
  for (const [what, file] of [['allotd', ALLOTD], ['allot-agent', AGENT], ['chromium', CHROMIUM], ['web/dist/index.html', path.join(WEB_DIR, 'index.html')]]) {
    assert.ok(fs.existsSync(file), `${what} is missing: ${file} (build it; for the dashboard: bash scripts/web.sh)`);
  }
  const portFile = path.join(dir, 'port');
  // One operator template, which the launch form offers.
  const config = path.join(dir, 'allotd.toml');
  fs.writeFileSync(config, ['[templates.greeter]', 'description = "Greets twice on two GPUs"',
    'command = ["sh", "-c", "echo greeting $GREETING; sleep 1; echo greeting done"]', 'gpus = 2',
    'env = { GREETING = "from the template" }', ''].join('\n'));
  start(ALLOTD, ['--config', config, '--listen', '127.0.0.1:0', '--port-file', portFile, '--data-dir', path.join(dir, 'data'), '--web-dir', WEB_DIR,
    '--heartbeat-interval-ms', '300', '--stop-grace-ms', '500', '--log-level', 'warn',
    // The dashboard's flows, not isolation: the agents run work as processes, for any tenant.
    '--process-runtime-tenants', 'all'], 'allotd', { ALLOT_ADMIN_KEY: adminKey });
  const port = await eventually('allotd to write its port', () => fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').trim());
  url = `http://127.0.0.1:${port}`;
  await eventually('allotd to be ready', async () => (await fetch(`${url}/readyz`)).ok);

  const acme = await call('POST', '/v1/tenants', { name: 'acme' });
  const globex = await call('POST', '/v1/tenants', { name: 'globex' });
  s.acme = acme.id;
  s.globex = globex.id;
  s.vision = (await call('POST', '/v1/projects', { name: 'vision', tenant_id: acme.id })).id;
  s.nlp = (await call('POST', '/v1/projects', { name: 'nlp', tenant_id: globex.id })).id;
  const ann = await call('POST', '/v1/users', { name: 'Ann', email: 'ann@acme.example', role: 'tenant-admin', tenant_id: acme.id });
  const bob = await call('POST', '/v1/users', { name: 'Bob', email: 'bob@globex.example', role: 'tenant-admin', tenant_id: globex.id });
  s.annKey = (await call('POST', '/v1/keys', { name: 'laptop', user_id: ann.id })).secret;
  s.bobKey = (await call('POST', '/v1/keys', { name: 'laptop', user_id: bob.id })).secret;
  // Work is placed only where a price covers it; spot is left unpriced (so it is not offered).
  await call('PUT', '/v1/prices', { gpu_model: 'H100-80GB', region: 'default', gpu_hour: '2.50' });
  await call('PUT', '/v1/prices', { gpu_model: 'A100-80GB', region: 'default', gpu_hour: '1.60' });
  const token = (await call('POST', '/v1/join-tokens', { name: 'browser-test' })).token;
  for (const name of ['node-a', 'node-b']) {
    start(AGENT, ['--server', url, '--join-token', token, '--state-dir', path.join(dir, name), '--name', name,
      '--simulate', '8xH100-80GB', '--runtime', 'process', '--log-level', 'warn'], name);
  }
  await eventually('both nodes to be ready', async () => {
    const nodes = (await call('GET', '/v1/nodes')).items;
    return nodes.length === 2 && nodes.every((n) => n.state === 'ready');
  });
  // The operator's books: a site with its power price and grid intensity, and both nodes bought
  // as one asset on a loan, so that the finance page has costs to show.
  await call('PUT', '/v1/finance/sites/default', { pue: '1.25', colocation_per_kw_month: '180' });
  await call('POST', '/v1/finance/sites/default/power-prices', { price_per_kwh: '0.14' });
  await call('POST', '/v1/finance/sites/default/carbon', { g_per_kwh: 350 });
  await call('POST', '/v1/finance/assets', {
    name: 'rack 1', nodes: ['node-a', 'node-b'], cost: '480000.00', in_service: `${new Date().toISOString().slice(0, 7)}-01T00:00:00Z`,
    life_months: 48, power_kw: '12', financing: { kind: 'loan', principal: '400000', annual_rate: '0.065', term_months: 36 },
  });
  // Globex's work, so that the operator sees two tenants on the fleet.
  s.globexRun = (await call('POST', '/v1/instances', { command: ['sh', '-c', 'echo globex; sleep 120'], gpus: 2, project_id: s.nlp }, s.bobKey)).id;
  await eventually('globex work to run', async () => (await call('GET', `/v1/instances/${s.globexRun}`)).state === 'running');

  browser = await launchChromium(path.join(dir, 'chromium'));
  page = browser.pages()[0] ?? (await browser.newPage());
  page.setDefaultTimeout(15000);
  page.on('dialog', (d) => d.accept());
  page.on('pageerror', (e) => console.error('page error:', e.message));
});

after(async () => {
  await browser?.close().catch(() => undefined);
  if (url) {
    try {
      const live = (await call('GET', '/v1/instances?limit=1000')).items.filter((i) => ['queued', 'scheduled', 'starting', 'running'].includes(i.state));
      for (const i of live) await call('POST', `/v1/instances/${i.id}/stop`).catch(() => undefined);
      await eventually('work to end', async () => (await call('GET', '/v1/instances?limit=1000')).items.every((i) => !['scheduled', 'starting', 'running'].includes(i.state)), 10000).catch(() => undefined);
    } catch {
      // allotd is gone already.
    }
  }
  await stopAll([...procs].reverse().map((p) => p.child));
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('dashboard', () => {
  it('refuses a wrong key and shows the API error', async () => {
    await page.goto(`${url}/`);
    await page.waitForSelector('[data-testid=key-input]');
    await page.fill('[data-testid=key-input]', `allot_${'0'.repeat(40)}`);
    await page.click('[data-testid=sign-in]');
    const error = page.locator('[data-testid=signin-error]');
    await error.waitFor({ state: 'visible' });
    assert.match(await error.textContent(), /unauthenticated/);
    await shot('01-sign-in-refused');
  });

  it('a tenant key sees its tenant only, and the fleet is operator-only', async () => {
    await signIn(s.annKey);
    assert.match(await page.locator('[data-testid=whoami]').textContent(), /Ann.*tenant-admin.*acme/s);
    await go('tenants');
    await page.waitForSelector('[data-testid=tenants-table] tbody tr');
    const tenants = await page.locator('[data-testid=tenants-table] tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.tenant));
    assert.deepEqual(tenants, ['acme']);
    await shot('02-tenant-tenants');
    await go('fleet');
    await page.waitForSelector('[data-testid=fleet-operator-only]');
    assert.equal(await page.locator('[data-testid=gpu-cell]').count(), 0);
    assert.equal(await page.locator('[data-nav=finance]').count(), 0, 'no finance for a tenant');
    await shot('03-tenant-fleet');
    // Globex's work is not listed for Ann.
    await go('instances');
    await page.waitForSelector('[data-testid=instance-list]');
    await sleep(500);
    assert.equal(await page.locator(`[data-testid=instances-table] tr[data-id="${s.globexRun}"]`).count(), 0);
  });

  it('shows a refused launch with its error code', async () => {
    await go('instances');
    // Reserved work needs a reservation of the tenant: allotd refuses it at creation.
    await page.selectOption('[data-testid=launch-class]', 'reserved');
    await page.fill('[data-testid=launch-command]', 'true');
    await page.click('[data-testid=launch-submit]');
    const error = page.locator('[data-testid=launch-error]');
    await error.waitFor({ state: 'visible' });
    assert.match(await error.textContent(), /invalid_argument: .*reserv.*\(HTTP 400\)/);
    await shot('03b-launch-refused');
    await page.selectOption('[data-testid=launch-class]', 'on-demand');
  });

  it('launches an instance, watches it run and reads its logs', async () => {
    s.helloRun = await launchFromForm("sh -c 'echo hello; sleep 3; echo bye'", async () => {
      await page.fill('[data-testid=launch-gpus]', '1');
      await page.selectOption('[data-testid=launch-gpu-type]', 'H100');
    });
    const state = page.locator('[data-testid=instance-state]');
    await eventually('the instance to be running', async () => /running/.test(await state.textContent()));
    await eventually('hello in the logs', async () => /hello/.test(await page.locator('[data-testid=logs]').textContent()));
    const facts = await page.locator('[data-testid=instance-facts]').textContent();
    assert.match(facts, /acme \/ vision/);
    assert.match(facts, /1 GPU · H100/);
    await shot('04-instance-running');
    // The page follows the instance to its end without a reload.
    await eventually('the instance to succeed', async () => /succeeded/.test(await state.textContent()), 20000);
    await eventually('bye in the logs', async () => /bye/.test(await page.locator('[data-testid=logs]').textContent()));
    assert.match(await page.locator('[data-testid=instance-events]').textContent(), /running/);
    assert.equal((await call('GET', `/v1/instances/${s.helloRun}`, undefined, s.annKey)).state, 'succeeded');
  });

  it('stops a running instance from the UI', async () => {
    s.stopRun = await launchFromForm("sh -c 'echo second; sleep 600'", () => page.check('input[name=interactive]'));
    const state = page.locator('[data-testid=instance-state]');
    await eventually('the second instance to run', async () => /running/.test(await state.textContent()));
    await page.click('[data-testid=stop]');
    await eventually('the instance to be stopped', async () => /stopped/.test(await state.textContent()), 20000);
    assert.equal((await call('GET', `/v1/instances/${s.stopRun}`)).state, 'stopped');
    await shot('05-instance-stopped');
  });

  it('makes a volume, refuses a bad one with its code, and deletes it', async () => {
    await go('volumes');
    await page.locator('[data-testid=volumes]').waitFor();
    await page.fill('[data-testid=volume-name]', 'Not A Name');
    await page.fill('[data-testid=volume-size]', '100');
    await page.click('[data-testid=volume-create]');
    await page.locator('[data-testid=toast].toast-error', { hasText: 'invalid_argument' }).waitFor();
    await page.fill('[data-testid=volume-name]', 'ckpt');
    await page.fill('[data-testid=volume-size]', '100');
    await page.click('[data-testid=volume-create]');
    const row = page.locator('[data-testid=volumes-table] tr[data-volume=ckpt]');
    await row.waitFor();
    assert.match(await row.textContent(), /vision.*100 GB.*default.*local/s);
    // Another tenant's key does not see it.
    assert.equal((await call('GET', '/v1/volumes', undefined, s.bobKey)).items.length, 0);
    await shot('05b-volumes');
    await row.locator('[data-testid=volume-delete]').click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await call('GET', '/v1/volumes', undefined, s.annKey)).items.length, 0);
  });

  it('launches from an operator template, which fills the form', async () => {
    await go('instances');
    await page.selectOption('[data-testid=launch-template]', 'greeter');
    assert.match(await page.locator('[data-testid=launch-template-note]').textContent(), /Greets twice on two GPUs/);
    assert.equal(await page.inputValue('[data-testid=launch-gpus]'), '2');
    assert.match(await page.getAttribute('[data-testid=launch-command]', 'placeholder'), /from the template: sh -c echo greeting/);
    await page.click('[data-testid=launch-submit]');
    await page.waitForURL(/#\/instances\/ins_/);
    const id = page.url().split('/').pop();
    const made = await call('GET', `/v1/instances/${id}`, undefined, s.annKey);
    assert.deepEqual(made.spec.command, ['sh', '-c', 'echo greeting $GREETING; sleep 1; echo greeting done']);
    assert.equal(made.spec.gpus, 2);
    assert.equal(made.spec.env.GREETING, 'from the template');
    assert.equal(made.spec.from_template, 'greeter');
    await eventually('the template on the instance page', async () => /Template\s*greeter/.test(await page.locator('[data-testid=instance-facts]').textContent()));
    const logs = page.locator('[data-testid=logs]');
    await eventually('the template\'s output', async () => /greeting from the template[\s\S]*greeting done/.test(await logs.textContent()), 20000);
    await shot('05b-launched-from-template');
    // Back to no template: the command is required again.
    await go('instances');
    await page.selectOption('[data-testid=launch-template]', 'greeter');
    await page.selectOption('[data-testid=launch-template]', '');
    assert.equal(await page.locator('[data-testid=launch-command]').evaluate((e) => e.required), true);
  });

  it('lists and filters instances, and updates live', async () => {
    await go('instances');
    await page.evaluate(() => { window.__noReload = true; });
    await page.selectOption('[data-testid=filter-state]', 'stopped');
    await eventually('the stopped instance listed alone', async () => {
      const ids = await page.locator('[data-testid=instances-table] tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.id));
      return ids.length === 1 && ids[0] === s.stopRun;
    });
    await page.selectOption('[data-testid=filter-state]', '');
    await page.fill('[data-testid=filter-text]', 'hello');
    await eventually('the text filter', async () => {
      const ids = await page.locator('[data-testid=instances-table] tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.id));
      return ids.length === 1 && ids[0] === s.helloRun;
    });
    await page.fill('[data-testid=filter-text]', '');
    // Work launched elsewhere (the API) shows up while the page stays open.
    const queued = await call('POST', '/v1/instances', { command: ['sh', '-c', 'sleep 1'], gpus: 8, gpu_models: ['A100'], project_id: s.vision }, s.annKey);
    await page.locator(`[data-testid=instances-table] tr[data-id="${queued.id}"]`).waitFor();
    await page.locator('[data-testid=queue-table]').getByText(/A100/).first().waitFor();
    assert.match(await page.locator('[data-testid=queue-table]').textContent(), /no node fits|A100|waits/i);
    assert.equal(await page.evaluate(() => window.__noReload), true, 'the page was not reloaded');
    await shot('06-instances');
    await call('POST', `/v1/instances/${queued.id}/stop`, undefined, s.annKey);
    await signOut();
  });

  it('shows a gang as one row and keeps reasons and actions in view at 1400 px', async () => {
    await signIn(s.annKey);
    await go('instances');
    const gang = await call('POST', '/v1/instances', { command: ['sh', '-c', 'echo member; sleep 600'], gpus: 4, nodes: 2, interactive: true, project_id: s.vision }, s.annKey);
    const member = gang.members[1];
    // No node has 8 GPUs free while the gang and globex run: this one waits, with its reason.
    const waits = await call('POST', '/v1/instances', { command: ['sh', '-c', 'python3 -c "print(1)"; sleep 1; echo a long command line that goes on'], gpus: 8, project_id: s.vision }, s.annKey);
    const row = page.locator(`[data-testid=instances-table] tr[data-id="${gang.id}"]`);
    await row.waitFor();
    await page.locator(`[data-testid=instances-table] tr[data-id="${waits.id}"]`).waitFor();
    assert.equal(await page.locator(`[data-testid=instances-table] tr[data-id="${member}"]`).count(), 0, 'a member has no row of its own');
    await row.locator('[data-testid=gang-members] summary').click();
    const members = await row.locator('[data-testid=gang-members] li').evaluateAll((items) => items.map((i) => i.dataset.id));
    assert.deepEqual(members, [gang.id, member]);
    await eventually('the gang to run', async () => (await row.getAttribute('data-state')) === 'running');
    // Nothing to scroll sideways: every row's reason and its stop button lie inside the table's
    // visible box, in a 1400 px window.
    const wrap = page.locator('[data-testid=instance-list] .table-wrap');
    assert.ok(await wrap.evaluate((w) => w.scrollWidth <= w.clientWidth), 'the instances table fits without scrolling');
    const right = await wrap.evaluate((w) => w.getBoundingClientRect().right);
    assert.ok(right <= 1400, `the table ends inside the window (${right})`);
    for (const id of [gang.id, waits.id]) {
      const r = page.locator(`[data-testid=instances-table] tr[data-id="${id}"]`);
      const why = await r.locator('td.why').boundingBox();
      const stop = await r.locator('[data-testid=stop]').boundingBox();
      assert.ok(why && why.x + why.width <= right, `the reason of ${id} is in view: ${JSON.stringify(why)}`);
      assert.ok(stop && stop.x + stop.width <= right, `the stop button of ${id} is in view: ${JSON.stringify(stop)}`);
    }
    assert.match(await page.locator(`[data-testid=instances-table] tr[data-id="${waits.id}"] td.why`).textContent(), /\S/);
    await shot('06b-instances-gang');
    await call('POST', `/v1/instances/${gang.id}/stop`, undefined, s.annKey);
    await call('POST', `/v1/instances/${waits.id}/stop`, undefined, s.annKey);
    await eventually('the gang to stop', async () => (await call('GET', `/v1/instances/${member}`)).state === 'stopped');
    await signOut();
  });

  it('the operator sees every tenant, the fleet and its GPUs', async () => {
    await signIn(adminKey);
    // A tenant that has only paid in: its cash shows to the cent, rounded as money is (half away
    // from zero on the exact decimal, where a float would make 1,234.56).
    const initech = await call('POST', '/v1/tenants', { name: 'initech' });
    await call('POST', `/v1/tenants/${initech.id}/topups`, { amount: '1234.565' });
    await go('tenants');
    await eventually('four tenants', async () => (await page.locator('[data-testid=tenants-table] tbody tr').count()) === 4);
    const tenants = await page.locator('[data-testid=tenants-table] tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.tenant));
    assert.deepEqual(tenants.sort(), ['acme', 'globex', 'initech', 'operator']);
    assert.match(await page.locator('[data-testid=tenants-table] tr[data-tenant=initech]').textContent(), /1,234\.57/);
    await shot('07-operator-tenants');

    await go('fleet');
    await eventually('16 GPU cells', async () => (await page.locator('[data-testid=gpu-cell]').count()) === 16);
    const allocated = page.locator('[data-testid=gpu-cell][data-state=allocated]');
    await eventually('globex holding 2 GPUs', async () => (await allocated.count()) === 2);
    assert.equal(await allocated.first().getAttribute('data-tenant'), s.globex);
    assert.match(await page.locator('[data-testid=kpi-nodes]').textContent(), /2 \/ 2/);
    await page.selectOption('[data-testid=colour-by]', 'tenant');
    assert.match(await page.locator('[data-testid=legend]').textContent(), /globex/);
    await allocated.first().click();
    const detail = await page.locator('[data-testid=gpu-detail]').textContent();
    assert.match(detail, /H100-80GB/);
    assert.match(detail, /Utilisation/);
    assert.match(detail, new RegExp(s.globexRun));
    await page.selectOption('[data-testid=colour-by]', 'util');
    await page.selectOption('[data-testid=colour-by]', 'state');
    await shot('08-operator-fleet');
  });

  it('drafts an invoice and shows the printable page', async () => {
    const month = new Date().toISOString().slice(0, 7);
    const invoice = await call('POST', '/v1/invoices', { tenant_id: s.acme, month });
    assert.ok(invoice.lines.length >= 1, 'acme has usage to invoice');
    await go('invoices');
    await page.locator(`[data-testid=invoices-table] tr[data-id="${invoice.id}"]`).waitFor();
    await shot('09-invoices');
    await page.locator(`[data-testid=invoices-table] tr[data-id="${invoice.id}"] a`).first().click();
    await page.waitForURL(new RegExp(`#/invoices/${invoice.id}`));
    const frame = page.frameLocator('[data-testid=invoice-frame]');
    await frame.locator('body').getByText('H100-80GB').first().waitFor();
    assert.match(await frame.locator('body').textContent(), /acme/);
    assert.ok(await page.locator('[data-testid=print]').isVisible());
    assert.match(await page.locator('[data-testid=invoice-total]').textContent(), /\d+\.\d\d/);
    await shot('10-invoice');
  });

  it('shows usage, budgets, prices and the operator finance pages', async () => {
    await call('PUT', '/v1/budgets', { tenant_id: s.acme, amount: '0.000001', thresholds_pct: [50, 100] });
    await go('usage');
    await page.locator('[data-testid=chart-spend] canvas').waitFor();
    await eventually('the budget alert', async () => /budget\.threshold/.test(await page.locator('[data-testid=events]').textContent()), 20000);
    const budgets = await page.locator('[data-testid=budgets-table]').textContent();
    assert.match(budgets, /acme \(tenant\)/);
    const spent = await page.locator('[data-testid=budgets-table] .progress em').textContent();
    assert.ok(Number(spent.replace(/[^\d.]/g, '')) > 100, `the share of the budget spent: ${spent}`);
    assert.doesNotMatch(budgets, /NaN/);
    assert.equal(await page.locator('[data-testid=budgets-table] .badge', { hasText: '100 %' }).count(), 1, 'the 100 % threshold reached');
    await shot('11-usage');
    await call('PUT', '/v1/prices', { region: 'default', storage_gb_month: '0.10' });
    await go('prices');
    await page.locator('[data-testid=prices-table]').waitFor();
    assert.match(await page.locator('[data-testid=prices-table]').textContent(), /H100-80GB.*2\.50/s);
    // A region's storage price sits in the same table, with only its rate per GB-month.
    assert.match(await page.locator('[data-testid=prices-table]').textContent(), /storage.*default.*0\.10/s);
    // Spot has no price here: the regions table says so, never a silent 0.
    await page.locator('[data-testid=regions] table').waitFor();
    assert.match(await page.locator('[data-testid=regions]').textContent(), /H100-80GB.*2\.50.*no price/s);
    await shot('12-prices');
    await go('finance');
    await page.locator('[data-testid=kpi-revenue]').waitFor();
    await page.locator('[data-testid=chart-energy] canvas').waitFor();
    const pnl = await page.locator('[data-testid=pnl-table]').textContent();
    assert.match(pnl, /node-a/);
    // The month runs: its costs so far are the part of the month that has passed, and the whole
    // month is projected beside them. 480,000 over 48 months is 10,000 a month; a month's
    // interest on 400,000 at 6.5 % is 2,166.67, colocation of 12 kW at 180 is 2,160.00, and power
    // at its rate so far comes to little.
    const costs = await page.locator('[data-testid=kpi-costs]').textContent();
    assert.match(costs, /to date · whole month 14,3[2-9]\d\.\d\d/, costs);
    const soFar = Number(costs.match(/Costs\s*([\d,.]+)/)[1].replace(/,/g, ''));
    assert.ok(soFar > 0 && soFar < 14326.67, `the costs to date are part of the month's: ${costs}`);
    await page.getByText('rack 1').first().waitFor();
    await shot('13-finance');
    // The P&L's columns fit the window: nothing to scroll sideways to.
    const fits = await page.locator('[data-testid=pnl-table] .table-wrap').evaluate((w) => [w.scrollWidth, w.clientWidth, w.getBoundingClientRect().right]);
    assert.ok(fits[0] <= fits[1] && fits[2] <= 1400, `the P&L table fits at 1400 px: ${fits}`);
    await go('overview');
    await page.locator('[data-testid=recent-instances] table').waitFor();
    await shot('14-overview');
  });

  it('opens a published port through its signed link and types into the browser shell', async () => {
    // A small HTTP server in the instance, on a port it publishes.
    const port = await new Promise((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = probe.address();
        probe.close(() => resolve(p));
      });
    });
    const script = path.join(dir, 'hello_server.py');
    fs.writeFileSync(script, [
      'import http.server, sys',
      'class H(http.server.BaseHTTPRequestHandler):',
      '    def do_GET(self):',
      "        body = ('hello from port %d at %s' % (int(sys.argv[1]), self.path)).encode()",
      '        self.send_response(200); self.send_header("Content-Type", "text/plain")',
      '        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)',
      "http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()",
      '',
    ].join('\n'));
    if (await page.locator('[data-testid=sign-out]').count()) await signOut();
    await signIn(s.annKey);
    const made = await call('POST', '/v1/instances', { gpus: 1, interactive: true, ports: [port], command: ['python3', script, String(port)] }, s.annKey);
    s.portRun = made.id;
    await go(`instances/${made.id}`);
    const link = page.locator(`[data-testid=port-link-${port}]`);
    await eventually('the port link', async () => (await link.count()) > 0, 30000);
    const href = await link.getAttribute('href');
    assert.match(href, new RegExp(`^/i/${made.id}/${port}/\\?allot_link=`));
    // A new tab, with no key: the link lets it in, and the cookie it leaves lets the next page in.
    const tab = await page.context().newPage();
    await eventually('the instance to answer through its link', async () => {
      await tab.goto(`${url}${href}`);
      return /hello from port \d+ at \/$/.test(await tab.locator('body').textContent());
    }, 30000);
    await tab.goto(`${url}/i/${made.id}/${port}/second`);
    assert.match(await tab.locator('body').textContent(), /hello from port \d+ at \/second/);
    await tab.close();
    // Bob's key does not reach it.
    const theirs = await fetch(`${url}/i/${made.id}/${port}/`, { headers: { Authorization: `Bearer ${s.bobKey}` } });
    assert.equal(theirs.status, 404);
    await shot('05a-instance-ports');

    await page.click('[data-testid=open-shell]');
    await eventually('the shell to connect', async () => /connected/.test(await page.locator('[data-testid=shell-state]').textContent()));
    await page.locator('[data-testid=shell] .xterm').click();
    await page.keyboard.type('echo shell-$((6*7)); exit 7');
    await page.keyboard.press('Enter');
    await eventually('the command to run in the shell', async () => /shell-42/.test(await page.locator('[data-testid=shell] .xterm-rows').textContent()), 20000);
    await eventually('the shell to end with its exit code', async () => /exited with 7/.test(await page.locator('[data-testid=shell-state]').textContent()), 20000);
    await shot('05a-instance-shell');
    // The session is in the audit log, its start and its end.
    const shellAudit = async () => (await call('GET', '/v1/audit?limit=1000')).items.filter((e) => e.method === 'SHELL' && e.target_id === made.id);
    await eventually('the shell\'s end in the audit log', async () => (await shellAudit()).length === 2);
    assert.deepEqual((await shellAudit()).map((e) => e.status).sort((a, b) => a - b), [7, 101]);
    await call('POST', `/v1/instances/${made.id}/stop`, undefined, s.annKey);
  });

  it('makes a service, watches its replica get ready, and deletes it', async () => {
    const port = await new Promise((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address();
        probe.close(() => resolve(free));
      });
    });
    // Last: its replica would show among Ann's instances in the tests before.
    await signIn(s.annKey);
    await go('services');
    await page.locator('[data-testid=services]').waitFor();
    // A careless name is refused with its code, and nothing is made.
    await page.fill('[data-testid=service-name]', 'Not A Name');
    await page.fill('[data-testid=service-port]', String(port));
    await page.fill('[data-testid=service-command]', `python3 -m http.server ${port}`);
    await page.click('[data-testid=service-create]');
    await page.locator('[data-testid=toast].toast-error', { hasText: "invalid_argument: a service's name" }).waitFor();
    await page.fill('[data-testid=service-name]', 'web');
    await page.fill('[data-testid=service-gpus]', '1');
    await page.fill('[data-testid=service-replicas]', '1');
    await page.fill('[data-testid=service-model]', 'web-1');
    await page.click('[data-testid=service-create]');
    const row = page.locator('[data-testid=services-table] tr[data-service=web]');
    await row.waitFor();
    await eventually('the replica to be ready', async () => /1 ready of 1/.test(await row.textContent()));
    assert.match(await row.textContent(), /web-1.*own keys only.*\/s\/svc_/s);
    // Another tenant's key does not see it, nor reach it.
    assert.equal((await call('GET', '/v1/services', undefined, s.bobKey)).items.length, 0);
    await call('GET', '/s/web/', undefined, s.bobKey, 404);
    await row.locator('a').click();
    await page.waitForURL(/#\/services\/svc_/);
    const replica = page.locator('[data-testid=service-replicas-table] tbody tr');
    await replica.first().waitFor();
    assert.match(await replica.first().textContent(), /running.*ready.*answered 200/s);
    assert.match(await page.locator('[data-testid=service-margin]').textContent(), /Not shared/);
    await shot('05c-service');
    const replicaId = await replica.first().getAttribute('data-replica');
    await page.click('[data-testid=service-delete]');
    await page.waitForURL(/#\/services$/);
    await page.locator('[data-testid=services-table] tr[data-service=web]').waitFor({ state: 'detached' });
    assert.equal((await call('GET', '/v1/services', undefined, s.annKey)).items.length, 0);
    await eventually('its replica to stop', async () =>
      ['stopped', 'succeeded', 'failed'].includes((await call('GET', `/v1/instances/${replicaId}`, undefined, s.annKey)).state));
  });
});
