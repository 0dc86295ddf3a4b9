import './style.css';
import { api, forgetKey, learnReplicas, listAll, serverUrl, setLeaderChangeHandler, setUnauthenticatedHandler, storedKey } from './api';
import { makeCtx, type Ctx, type PageFactory, type PageView } from './context';
import { errorText, h, replace } from './dom';
import { ago } from './format';
import type { Project, Tenant, WhoAmI } from './types';
import { loginPage } from './pages/login';
import { overviewPage } from './pages/overview';
import { fleetPage } from './pages/fleet';
import { instancesPage } from './pages/instances';
import { instancePage } from './pages/instance';
import { tenantsPage } from './pages/tenants';
import { usagePage } from './pages/usage';
import { invoicesPage, invoicePage } from './pages/invoices';
import { pricesPage } from './pages/prices';
import { volumesPage } from './pages/volumes';
import { servicePage, servicesPage } from './pages/services';
import { financePage } from './pages/finance';

const POLL_MS = 2000;

interface Route {
  pattern: RegExp;
  page: PageFactory;
  nav: string;
}

const routes: Route[] = [
  { pattern: /^\/overview$/, page: overviewPage, nav: 'overview' },
  { pattern: /^\/fleet$/, page: fleetPage, nav: 'fleet' },
  { pattern: /^\/instances$/, page: instancesPage, nav: 'instances' },
  { pattern: /^\/instances\/([\w-]+)$/, page: instancePage, nav: 'instances' },
  { pattern: /^\/tenants$/, page: tenantsPage, nav: 'tenants' },
  { pattern: /^\/usage$/, page: usagePage, nav: 'usage' },
  { pattern: /^\/invoices$/, page: invoicesPage, nav: 'invoices' },
  { pattern: /^\/invoices\/([\w-]+)$/, page: invoicePage, nav: 'invoices' },
  { pattern: /^\/volumes$/, page: volumesPage, nav: 'volumes' },
  { pattern: /^\/services$/, page: servicesPage, nav: 'services' },
  { pattern: /^\/services\/([\w-]+)$/, page: servicePage, nav: 'services' },
  { pattern: /^\/prices$/, page: pricesPage, nav: 'prices' },
  { pattern: /^\/finance$/, page: financePage, nav: 'finance' },
];

const navItems: { id: string; label: string; icon: string; operator?: boolean }[] = [
  { id: 'overview', label: 'Overview', icon: '◎' },
  { id: 'fleet', label: 'Fleet', icon: '▦' },
  { id: 'instances', label: 'Instances', icon: '▶' },
  { id: 'tenants', label: 'Tenants', icon: '◫' },
  { id: 'volumes', label: 'Volumes', icon: '▣' },
  { id: 'services', label: 'Services', icon: '⇄' },
  { id: 'usage', label: 'Usage & budgets', icon: '▤' },
  { id: 'invoices', label: 'Invoices', icon: '▧' },
  { id: 'prices', label: 'Prices', icon: '¤' },
  { id: 'finance', label: 'Finance', icon: '∑', operator: true },
];

const root = document.getElementById('app')!;
let ctx: Ctx | null = null;
let current: PageView | null = null;
let timer: number | undefined;
let refreshing = false;
let again = false;
let lastOk = 0;
let shell: { main: HTMLElement; nav: HTMLElement; status: HTMLElement; banner: HTMLElement } | null = null;

function toast(message: string, kind: 'ok' | 'error' = 'ok'): void {
  const el = h('div', { class: `toast toast-${kind}`, role: kind === 'error' ? 'alert' : 'status', 'data-testid': 'toast' }, message);
  document.body.appendChild(el);
  setTimeout(() => el.remove(), kind === 'error' ? 8000 : 4000);
}

function signOut(message?: string): void {
  forgetKey();
  ctx = null;
  stopPage();
  shell = null;
  location.hash = '#/login';
  if (message) sessionStorage.setItem('allot.signin-message', message);
  route();
}

setUnauthenticatedHandler((error) => signOut(`Signed out: ${error.message}`));
setLeaderChangeHandler((server) => {
  if (ctx) toast(`allotd's leader is now ${server}`);
  updateStatus();
});

function stopPage(): void {
  if (timer !== undefined) clearInterval(timer);
  timer = undefined;
  current?.destroy?.();
  current = null;
}

async function refreshShared(c: Ctx): Promise<void> {
  const [tenants, projects] = await Promise.all([
    listAll<Tenant>('/v1/tenants'),
    listAll<Project>('/v1/projects?include_deleted=true'),
  ]);
  c.tenants = new Map(tenants.map((t) => [t.id, t]));
  c.projects = new Map(projects.map((p) => [p.id, p]));
}

async function tick(): Promise<void> {
  if (!ctx || !current) return;
  if (refreshing) {
    again = true;
    return;
  }
  refreshing = true;
  again = false;
  const page = current;
  try {
    await refreshShared(ctx);
    if (page === current) await page.refresh();
    lastOk = Date.now();
    shell?.banner.replaceChildren();
    shell?.banner.classList.remove('show');
  } catch (e) {
    if (shell && page === current) {
      replace(shell.banner, h('strong', null, 'Update failed: '), errorText(e));
      shell.banner.classList.add('show');
    }
  } finally {
    refreshing = false;
    updateStatus();
  }
  if (again) void tick();
}

function updateStatus(): void {
  if (!shell) return;
  const fresh = Date.now() - lastOk < POLL_MS * 3;
  replace(
    shell.status,
    h('span', { class: `dot ${fresh ? 'dot-live' : 'dot-stale'}` }),
    fresh ? 'Live' : 'Stale',
    h('span', { class: 'muted' }, lastOk ? ` · updated ${ago(new Date(lastOk).toISOString())}` : ''),
    h('span', { class: 'muted', 'data-testid': 'server', title: 'The allotd replica this console calls' }, serverUrl() === location.origin ? '' : ` · via ${serverUrl()}`),
  );
}

// On a phone the sidebar folds into a top bar: the menu button opens the links under it, and
// picking one closes them again, so that the page is in view.
function setMenuOpen(side: HTMLElement, button: HTMLElement, open: boolean): void {
  side.classList.toggle('open', open);
  button.setAttribute('aria-expanded', String(open));
}

function buildShell(c: Ctx): void {
  const menu = h('button', { class: 'btn btn-ghost menu', type: 'button', 'aria-label': 'Menu', 'aria-expanded': 'false', 'aria-controls': 'side', 'data-testid': 'menu' }, '☰');
  const nav = h('nav', { class: 'nav', onclick: () => setMenuOpen(side, menu, false) });
  const status = h('div', { class: 'live', 'data-testid': 'live' });
  const banner = h('div', { class: 'banner', role: 'alert' });
  const main = h('main', { class: 'main' });
  const who = h(
    'div',
    { class: 'who', 'data-testid': 'whoami' },
    h('div', { class: 'who-name' }, c.me.user.name),
    h('div', { class: 'who-sub' }, `${c.me.user.role} · ${c.me.tenant.name}`),
    h('div', { class: 'who-sub mono' }, c.me.user.email),
  );
  const side = h(
    'aside',
    { class: 'side', id: 'side' },
    h('div', { class: 'brand' }, h('span', { class: 'logo' }, '◆'), 'Allot', h('span', { class: 'brand-sub' }, 'GPU cloud')),
    menu,
    nav,
    h('div', { class: 'side-foot' }, who, h('button', { class: 'btn btn-ghost', 'data-testid': 'sign-out', onclick: () => signOut() }, 'Sign out')),
  );
  menu.addEventListener('click', () => setMenuOpen(side, menu, !side.classList.contains('open')));
  const app = h(
    'div',
    { class: 'layout' },
    side,
    h('div', { class: 'content' }, h('header', { class: 'top' }, h('div', { class: 'crumb', id: 'crumb' }), status), banner, main),
  );
  replace(root, app);
  shell = { main, nav, status, banner };
}

function renderNav(active: string): void {
  if (!shell || !ctx) return;
  replace(
    shell.nav,
    navItems
      .filter((item) => !item.operator || ctx!.isOperator)
      .map((item) =>
        h(
          'a',
          { href: `#/${item.id}`, class: item.id === active ? 'active' : '', 'data-nav': item.id },
          h('span', { class: 'icon' }, item.icon),
          item.label,
        ),
      ),
  );
}

async function route(): Promise<void> {
  const path = location.hash.replace(/^#/, '') || '/';
  if (path === '/login' || !storedKey()) {
    stopPage();
    ctx = null;
    shell = null;
    const message = sessionStorage.getItem('allot.signin-message');
    sessionStorage.removeItem('allot.signin-message');
    replace(root, loginPage(message, () => {
      location.hash = '#/overview';
    }));
    if (path !== '/login') history.replaceState(null, '', '#/login');
    return;
  }
  if (!ctx) {
    replace(root, h('div', { class: 'splash' }, 'Connecting to allotd…'));
    try {
      const me = await api<WhoAmI>('/v1/whoami');
      void learnReplicas();
      ctx = makeCtx(me, toast);
      await refreshShared(ctx).catch(() => undefined);
    } catch (e) {
      replace(
        root,
        h(
          'div',
          { class: 'splash' },
          h('div', { class: 'error' }, errorText(e)),
          h('button', { class: 'btn', onclick: () => route() }, 'Retry'),
          h('button', { class: 'btn btn-ghost', onclick: () => signOut() }, 'Sign out'),
        ),
      );
      return;
    }
    buildShell(ctx);
  }
  if (!shell) buildShell(ctx);
  const match = routes.map((r) => ({ r, m: r.pattern.exec(path) })).find((x) => x.m);
  if (!match) {
    location.hash = '#/overview';
    return;
  }
  stopPage();
  renderNav(match.r.nav);
  const page = match.r.page(ctx, match.m!.slice(1));
  current = page;
  replace(shell!.main, page.el);
  shell!.main.scrollTop = 0;
  await tick();
  if (current === page) timer = window.setInterval(() => void tick(), POLL_MS);
}

window.addEventListener('hashchange', () => void route());
setInterval(updateStatus, 1000);
void route();
