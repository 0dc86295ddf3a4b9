import { api, listAll, qs } from '../api';
import { SimpleChart } from '../charts';
import type { Ctx, PageView } from '../context';
import { badge, card, h, kpi, page, renderIf, replace, table, toolbar, type Column } from '../dom';
import { actionForm } from '../forms';
import { money, num, time } from '../format';
import type { AllotEvent, Budget, Usage } from '../types';

export function dayRange(days: number): string[] {
  const out: string[] = [];
  const today = new Date();
  for (let i = days - 1; i >= 0; i--) {
    const d = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - i));
    out.push(d.toISOString().slice(0, 10));
  }
  return out;
}

export function fromDays(days: number): string {
  const today = new Date();
  return new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - (days - 1))).toISOString().replace(/\.\d+Z$/, 'Z');
}

function eventSummary(ctx: Ctx, e: AllotEvent): string {
  const d = e.data ?? {};
  if (e.kind === 'budget.threshold') {
    return `${d.project_id ? ctx.projectName(String(d.project_id)) : 'tenant'} budget reached ${d.threshold_pct} %: ${money(d.spend as string)} of ${money(d.amount as string)} (${d.month}, ${d.enforcement})`;
  }
  if (e.kind === 'instance.idle') return `${d.instance_id}: ${d.reason ?? d.action}`;
  if (typeof d.reason === 'string') return d.reason;
  return Object.entries(d)
    .slice(0, 6)
    .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`)
    .join(' ');
}

export function usagePage(ctx: Ctx): PageView {
  const tenant = h('select', { 'data-testid': 'usage-tenant', onchange: () => void refresh() }, h('option', { value: '' }, 'All tenants'));
  const range = h(
    'select',
    { 'data-testid': 'usage-range', onchange: () => void refresh() },
    h('option', { value: '14' }, 'Last 14 days'),
    h('option', { value: '30' }, 'Last 30 days'),
    h('option', { value: '90' }, 'Last 90 days'),
  );
  const kpis = h('div', { class: 'kpis' });
  const daily = new SimpleChart('bar', { y: 'spend', y2: 'GPU-hours', testid: 'chart-spend' });
  const split = new SimpleChart('doughnut', { height: 240, testid: 'chart-split' });
  const byProject = h('div', { 'data-testid': 'usage-by-project' });
  const budgets = h('div', { 'data-testid': 'budgets' });
  const events = h('div', { 'data-testid': 'events' });

  const amount = h('input', { type: 'text', placeholder: '2500.00', required: true, 'data-testid': 'budget-amount' });
  const thresholds = h('input', { type: 'text', value: '50,80,100' });
  const enforcement = h('select', null, ['none', 'block_new', 'stop_running'].map((x) => h('option', { value: x }, x)));
  const budgetProject = h('select', null);
  const budgetForm = ctx.canAdmin
    ? actionForm(
        ctx,
        async () => {
          const body: Record<string, unknown> = {
            amount: amount.value.trim(),
            thresholds_pct: thresholds.value.split(',').map((x) => Number(x.trim())).filter((x) => x > 0),
            enforcement: enforcement.value,
          };
          const [t, p] = budgetProject.value.split('/');
          if (t) body.tenant_id = t;
          if (p) body.project_id = p;
          await api('/v1/budgets', { method: 'PUT', body });
          ctx.toast('Budget saved');
          await refresh();
        },
        budgetProject,
        amount,
        h('span', { class: 'muted' }, 'alerts at %'),
        thresholds,
        enforcement,
        h('button', { class: 'btn', type: 'submit' }, 'Set monthly budget'),
      )
    : null;

  const el = page(
    'Usage & budgets',
    toolbar(ctx.isOperator ? tenant : null, range),
    kpis,
    h('div', { class: 'grid-2 grid-wide-left' }, card('Spend and GPU-hours per day', daily.el), card(ctx.isOperator ? 'This month by tenant' : 'This month by project', split.el)),
    card('This month by project', byProject),
    card('Budgets', h('p', { class: 'muted' }, 'Per calendar month (UTC); alerts when the month’s spend reaches each threshold.'), budgetForm, budgets),
    card('Events and alerts', events),
  );

  async function refresh(): Promise<void> {
    const tenantId = ctx.isOperator ? tenant.value : '';
    const days = Number(range.value);
    const [perDay, perProject, perTenant, budgetList, eventList] = await Promise.all([
      api<Usage>(`/v1/usage${qs({ group_by: 'day', from: fromDays(days), tenant_id: tenantId })}`),
      api<Usage>(`/v1/usage${qs({ group_by: 'project', tenant_id: tenantId })}`),
      ctx.isOperator ? api<Usage>(`/v1/usage${qs({ group_by: 'tenant', tenant_id: tenantId })}`) : Promise.resolve(null),
      listAll<Budget>(`/v1/budgets${qs({ tenant_id: tenantId })}`),
      listAll<AllotEvent>(`/v1/events${qs({ tenant_id: tenantId })}`),
    ]);
    // Tenant selector.
    const tenants = [...ctx.tenants.values()].sort((a, b) => a.name.localeCompare(b.name));
    const sig = tenants.map((t) => t.id).join();
    if (tenant.dataset.sig !== sig) {
      tenant.dataset.sig = sig;
      const v = tenant.value;
      replace(tenant, h('option', { value: '' }, 'All tenants'), tenants.map((t) => h('option', { value: t.id }, t.name)));
      tenant.value = v;
      const projects = [...ctx.projects.values()].filter((p) => !p.deleted_at && (ctx.isOperator || p.tenant_id === ctx.me.tenant.id));
      replace(
        budgetProject,
        tenants.filter((t) => ctx.isOperator || t.id === ctx.me.tenant.id).map((t) => h('option', { value: `${t.id}/` }, `${t.name}: whole tenant`)),
        projects.map((p) => h('option', { value: `${p.tenant_id}/${p.id}` }, `${ctx.tenantName(p.tenant_id)} / ${p.name}`)),
      );
    }
    const f = perDay.forecast;
    replace(
      kpis,
      kpi('Spent this month', money(f.spent), f.month, 'kpi-spent'),
      kpi('Burn rate', `${money(f.burn_per_hour)}/h`, 'running work at today’s prices'),
      kpi('Month-end forecast', money(f.month_end), 'if what runs now keeps running'),
      kpi(`GPU-hours, ${days} days`, num(perDay.total.gpu_hours, 2), `${money(perDay.total.spend)} spent`),
    );
    const labels = dayRange(days);
    const byDay = new Map(perDay.items.map((i) => [i.key, i]));
    daily.update(labels.map((d) => d.slice(5)), [
      { label: 'Spend', data: labels.map((d) => Number(byDay.get(d)?.spend ?? 0)), color: '#4f9cf9' },
      { label: 'GPU-hours', data: labels.map((d) => Number(byDay.get(d)?.gpu_hours ?? 0)), color: '#34d399', type: 'line', axis: 'y2' },
    ]);
    const splitItems = (perTenant ?? perProject).items.filter((i) => Number(i.spend) > 0 || Number(i.gpu_hours) > 0);
    split.update(
      splitItems.map((i) => i.name ?? i.key),
      [{ label: 'Spend', data: splitItems.map((i) => Number(i.spend)) }],
    );
    renderIf(byProject, perProject.items, () =>
      table(
        perProject.items,
        [
          { title: 'Project', cell: (i) => i.name ?? i.key },
          { title: 'Tenant', cell: (i) => ctx.tenantName(ctx.projects.get(i.key)?.tenant_id ?? '') },
          { title: 'GPU-hours', cell: (i) => num(i.gpu_hours, 3), class: 'num' },
          { title: 'Storage GB-hours', cell: (i) => num(i.storage_gb_hours ?? '0', 1), class: 'num' },
          { title: 'Spend', cell: (i) => money(i.spend, 4), class: 'num' },
        ],
        { empty: 'No usage this month yet.', testid: 'usage-table' },
      ),
    );
    renderIf(budgets, budgetList, () =>
      table(
        budgetList,
        [
          { title: 'Scope', cell: (b) => `${ctx.tenantName(b.tenant_id)}${b.project_id ? ` / ${ctx.projectName(b.project_id)}` : ' (tenant)'}` },
          { title: 'Month', cell: (b) => b.month },
          { title: 'Spend / amount', cell: (b) => `${money(b.spend)} / ${money(b.amount)}`, class: 'num' },
          {
            title: 'Spent',
            cell: (b) => {
              const p = Number(b.amount) > 0 ? (Number(b.spend) / Number(b.amount)) * 100 : 0;
              return h('div', { class: 'progress' }, h('span', { class: p >= 100 ? 'over' : p >= 80 ? 'warn' : '', style: { width: `${Math.min(100, p)}%` } }), h('em', null, `${num(p, 1)} %`));
            },
          },
          { title: 'Alerts at', cell: (b) => b.thresholds_pct.map((t) => `${t} %`).join(', ') },
          { title: 'Reached', cell: (b) => (b.reached_pct.length ? b.reached_pct.map((t) => badge(`${t} %`, t >= 100 ? 'failed' : 'stopped')) : '–') },
          { title: 'Enforcement', cell: (b) => badge(b.enforcement, 'role') },
          { title: 'Webhook', cell: (b) => b.webhook_url ?? '–' },
        ],
        { empty: 'No budget set.', testid: 'budgets-table' },
      ),
    );
    const recent = [...eventList].reverse().slice(0, 100);
    renderIf(events, recent.map((e) => [e.seq, e.delivery?.state]), () =>
      table<AllotEvent>(
        recent,
        ([
          { title: 'At', cell: (e) => time(e.at), class: 'nowrap' },
          { title: 'Kind', cell: (e) => badge(e.kind, e.kind.split('.')[0]) },
          ctx.isOperator ? { title: 'Tenant', cell: (e: AllotEvent) => (e.tenant_id ? ctx.tenantName(e.tenant_id) : '–') } : null,
          { title: 'What', cell: (e) => eventSummary(ctx, e) },
          { title: 'Webhook', cell: (e) => (e.delivery ? `${e.delivery.state} (${e.delivery.attempts})` : '–') },
        ] as (Column<AllotEvent> | null)[]).filter((c): c is Column<AllotEvent> => c !== null),
        { empty: 'No event yet.', testid: 'events-table' },
      ),
    );
  }

  return { el, refresh, destroy: () => { daily.destroy(); split.destroy(); } };
}
