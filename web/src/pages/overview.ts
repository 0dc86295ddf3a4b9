import { api, listAll, qs } from '../api';
import { SimpleChart } from '../charts';
import type { Ctx, PageView } from '../context';
import { badge, card, h, kpi, link, page, renderIf, replace, table } from '../dom';
import { ago, gpuRequest, money, num } from '../format';
import type { Page } from '../api';
import type { Balance, Instance, NodeInfo, Usage } from '../types';
import { dayRange, fromDays } from './usage';

export function overviewPage(ctx: Ctx): PageView {
  const kpis = h('div', { class: 'kpis' });
  const spend = new SimpleChart('bar', { y: 'spend', y2: 'GPU-hours', testid: 'chart-overview' });
  const recent = h('div', { 'data-testid': 'recent-instances' });
  const el = page(
    `Welcome, ${ctx.me.user.name}`,
    h('div', { class: 'muted' }, `${ctx.me.tenant.name} · ${ctx.me.user.role}`),
    kpis,
    h('div', { class: 'grid-2 grid-wide-left' }, card('Spend, last 14 days', spend.el), card('Recent instances', recent)),
  );

  async function refresh(): Promise<void> {
    const [instances, usage, nodes, balance] = await Promise.all([
      listAll<Instance>('/v1/instances'),
      api<Usage>(`/v1/usage${qs({ group_by: 'day', from: fromDays(14) })}`),
      ctx.isOperator ? api<Page<NodeInfo>>('/v1/nodes?limit=1000').then((p) => p.items) : Promise.resolve(null),
      ctx.isOperator ? Promise.resolve(null) : api<Balance>('/v1/tenants/me/balance').catch(() => null),
    ]);
    const count = (s: string) => instances.filter((i) => i.state === s).length;
    const gpus = nodes?.flatMap((n) => n.gpus) ?? [];
    replace(
      kpis,
      nodes ? kpi('GPUs allocated', `${num(gpus.reduce((a, g) => a + g.used_milli, 0) / 1000, 2)} / ${gpus.length}`, `${nodes.filter((n) => n.state === 'ready').length} of ${nodes.length} nodes ready`) : null,
      kpi('Running', String(count('running')), `${count('queued')} queued`, 'kpi-running'),
      kpi('Spent this month', money(usage.forecast.spent), usage.forecast.month),
      kpi('Month-end forecast', money(usage.forecast.month_end), `${money(usage.forecast.burn_per_hour)}/h now`),
      balance ? kpi('Available', balance.available === null ? 'unbounded' : money(balance.available), availableNote(balance)) : null,
    );
    const labels = dayRange(14);
    const byDay = new Map(usage.items.map((i) => [i.key, i]));
    spend.update(labels.map((d) => d.slice(5)), [
      { label: 'Spend', data: labels.map((d) => Number(byDay.get(d)?.spend ?? 0)) },
      { label: 'GPU-hours', data: labels.map((d) => Number(byDay.get(d)?.gpu_hours ?? 0)), type: 'line', axis: 'y2', color: '#34d399' },
    ]);
    const latest = [...instances].sort((a, b) => b.created_at.localeCompare(a.created_at)).slice(0, 8);
    renderIf(recent, latest.map((i) => [i.id, i.state]), () =>
      table(
        latest,
        [
          { title: 'Instance', cell: (i) => link(`#/instances/${i.id}`, i.id), class: 'mono' },
          { title: 'State', cell: (i) => badge(i.state) },
          { title: 'GPUs', cell: (i) => gpuRequest(i.spec) },
          { title: 'Project', cell: (i) => ctx.projectName(i.project_id) },
          { title: 'Created', cell: (i) => ago(i.created_at) },
        ],
        { empty: 'No instance yet.' },
      ),
    );
  }
  return { el, refresh, destroy: () => spend.destroy() };
}

// Under the available money: the billing mode and cash, and how much of it calls to shared
// services may spend when promotional credit makes the two differ.
function availableNote(b: Balance): string {
  const note = `${b.billing} · cash ${money(b.cash)}`;
  if (b.available_for_services === null || b.available_for_services === b.available) return note;
  return `${note} · ${money(b.available_for_services)} for service calls (credit pays for GPU work and storage, not calls)`;
}
