import { api, listAll } from '../api';
import type { Ctx, PageView } from '../context';
import { badge, card, h, kpi, page, renderIf, replace, table } from '../dom';
import { actionForm } from '../forms';
import { addMoney, money, time } from '../format';
import type { Balance, Tenant, User } from '../types';

export function tenantsPage(ctx: Ctx): PageView {
  const kpis = h('div', { class: 'kpis' });
  const tenantsBox = h('div', { 'data-testid': 'tenants' });
  const projectsBox = h('div', { 'data-testid': 'projects' });
  const usersBox = h('div', { 'data-testid': 'users' });
  const createName = h('input', { type: 'text', placeholder: 'tenant name', 'data-testid': 'tenant-name' });
  const createForm = ctx.isOperator
    ? actionForm(
        ctx,
        async () => {
          const t = await api<Tenant>('/v1/tenants', { method: 'POST', body: { name: createName.value.trim() } });
          ctx.toast(`Created tenant ${t.name}`);
          createName.value = '';
          await refresh();
        },
        createName,
        h('button', { class: 'btn', type: 'submit' }, 'Create tenant'),
      )
    : null;
  const projectName = h('input', { type: 'text', placeholder: 'project name' });
  const projectTenant = h('select');
  const projectForm = ctx.canAdmin
    ? actionForm(
        ctx,
        async () => {
          await api('/v1/projects', { method: 'POST', body: { name: projectName.value.trim(), tenant_id: projectTenant.value || undefined } });
          ctx.toast(`Created project ${projectName.value}`);
          projectName.value = '';
          await refresh();
        },
        ctx.isOperator ? projectTenant : null,
        projectName,
        h('button', { class: 'btn', type: 'submit' }, 'Create project'),
      )
    : null;
  const el = page(
    ctx.isOperator ? 'Tenants' : 'Your tenant',
    null,
    kpis,
    card(h('span', null, 'Tenants and balances'), createForm, tenantsBox),
    h('div', { class: 'grid-2' }, card('Projects', projectForm, projectsBox), card('Users', usersBox)),
  );

  async function refresh(): Promise<void> {
    const tenants = [...ctx.tenants.values()].sort((a, b) => Number(a.is_operator) - Number(b.is_operator) || a.name.localeCompare(b.name));
    const [balances, users] = await Promise.all([
      Promise.all(tenants.map((t) => api<Balance>(`/v1/tenants/${t.id}/balance`).catch(() => null))),
      listAll<User>('/v1/users').catch(() => [] as User[]),
    ]);
    const balanceOf = new Map(balances.filter((b): b is Balance => !!b).map((b) => [b.tenant_id, b]));
    const projects = [...ctx.projects.values()].filter((p) => !p.deleted_at);
    const sig = tenants.map((t) => t.id).join();
    if (projectTenant.dataset.sig !== sig) {
      projectTenant.dataset.sig = sig;
      replace(projectTenant, tenants.map((t) => h('option', { value: t.id }, t.name)));
    }
    // Money paid in and not yet spent is a liability to the tenants; a postpaid tenant's debt is
    // owed to the operator. Netting one against the other would hide both, so they add up apart.
    const cashes = [...balanceOf.values()].map((b) => b.cash);
    const held = addMoney(...cashes.filter((c) => !c.startsWith('-')));
    const owed = addMoney(...cashes.filter((c) => c.startsWith('-')).map((c) => c.slice(1)));
    replace(
      kpis,
      kpi('Tenants', String(tenants.length), ctx.isOperator ? 'including the operator' : undefined, 'kpi-tenants'),
      kpi('Projects', String(projects.length)),
      kpi('Users', String(users.length)),
      ...(ctx.isOperator
        ? [
            kpi('Cash held for tenants', money(held), 'paid in and not yet spent', 'kpi-cash-held'),
            kpi('Owed by tenants', money(owed), 'postpaid usage posted and not paid', 'kpi-owed'),
          ]
        : [kpi('Cash', money(addMoney(...cashes)), 'paid in less posted usage')]),
    );
    renderIf(tenantsBox, [tenants, [...balanceOf.values()].map((b) => [b.cash, b.credits, b.held, b.unposted, b.available])], () =>
      table(
        tenants,
        [
          { title: 'Tenant', cell: (t) => h('span', null, h('strong', null, t.name), t.is_operator ? ' ' : null, t.is_operator ? badge('operator') : null) },
          { title: 'Id', cell: (t) => t.id, class: 'mono' },
          { title: 'Billing', cell: (t) => `${t.billing}${t.billing === 'postpaid' && Number(t.credit_limit) > 0 ? ` (limit ${money(t.credit_limit)})` : ''}` },
          { title: 'Weight', cell: (t) => String(t.weight), class: 'num' },
          { title: 'Cash', cell: (t) => money(balanceOf.get(t.id)?.cash), class: 'num' },
          { title: 'Credits', cell: (t) => money(balanceOf.get(t.id)?.credits), class: 'num' },
          { title: 'Held', cell: (t) => money(balanceOf.get(t.id)?.held), class: 'num' },
          { title: 'Unposted', cell: (t) => money(balanceOf.get(t.id)?.unposted, 4), class: 'num' },
          { title: 'Available', cell: (t) => { const b = balanceOf.get(t.id); return b ? (b.available === null ? 'unbounded' : money(b.available)) : '–'; }, class: 'num' },
          { title: 'Projects', cell: (t) => String(projects.filter((p) => p.tenant_id === t.id).length), class: 'num' },
        ],
        { testid: 'tenants-table', rowAttrs: (t) => ({ 'data-tenant': t.name }) },
      ),
    );
    renderIf(projectsBox, projects, () =>
      table(
        projects.sort((a, b) => ctx.tenantName(a.tenant_id).localeCompare(ctx.tenantName(b.tenant_id)) || a.name.localeCompare(b.name)),
        [
          { title: 'Project', cell: (p) => h('strong', null, p.name) },
          { title: 'Tenant', cell: (p) => ctx.tenantName(p.tenant_id) },
          { title: 'Id', cell: (p) => p.id, class: 'mono' },
          { title: 'Created', cell: (p) => time(p.created_at) },
        ],
        { empty: 'No project yet.', testid: 'projects-table' },
      ),
    );
    renderIf(usersBox, users, () =>
      table(
        users,
        [
          { title: 'Name', cell: (u) => u.name },
          { title: 'Email', cell: (u) => u.email },
          { title: 'Role', cell: (u) => badge(u.role, 'role') },
          { title: 'Tenant', cell: (u) => ctx.tenantName(u.tenant_id) },
          { title: '', cell: (u) => (u.disabled ? badge('disabled') : null) },
        ],
        { empty: 'No user.' },
      ),
    );
  }

  return { el, refresh };
}
