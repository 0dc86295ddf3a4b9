import { api, ApiError, qs } from '../api';
import { SimpleChart } from '../charts';
import type { Ctx, PageView } from '../context';
import { card, h, kpi, page, renderIf, renderTable, replace, table, toolbar, type Column } from '../dom';
import { addMoney, money, num, pct, thisMonth } from '../format';
import type { BuyOrRentItem, PaybackItem, Report, Usage } from '../types';
import { dayRange, fromDays } from './usage';

// A right-aligned column of amounts, each shown to `digits` decimals.
function moneyColumn<T>(title: string, amount: (row: T) => string | null | undefined, digits?: number): Column<T> {
  return { title, cell: (row) => money(amount(row), digits), class: 'num' };
}

function lastMonths(n: number): string[] {
  const out: string[] = [];
  const now = new Date();
  for (let i = n - 1; i >= 0; i--) out.push(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1)).toISOString().slice(0, 7));
  return out;
}

export function financePage(ctx: Ctx): PageView {
  const month = h('select', { 'data-testid': 'finance-month', onchange: () => void refresh() }, lastMonths(12).reverse().map((m) => h('option', { value: m }, m)));
  month.value = thisMonth();
  const by = h('select', { 'data-testid': 'finance-by', onchange: () => void refresh() }, ['node', 'pool', 'model', 'region', 'total'].map((b) => h('option', { value: b }, `by ${b}`)));
  const notice = h('div');
  const kpis = h('div', { class: 'kpis' });
  const pnl = new SimpleChart('bar', { y: 'money', testid: 'chart-pnl' });
  const util = new SimpleChart('bar', { y: 'utilisation %', testid: 'chart-utilisation' });
  const trend = new SimpleChart('bar', { y: 'money', testid: 'chart-trend' });
  const energy = new SimpleChart('bar', { y: 'kWh', y2: 'kg CO2e', testid: 'chart-energy' });
  const groups = h('div', { 'data-testid': 'pnl-table', class: 'compact' });
  const payback = h('div', { class: 'compact' });
  const buyRent = h('div', { class: 'compact' });
  const body = h(
    'div',
    null,
    kpis,
    h('div', { class: 'grid-2' }, card('Revenue, costs and margin', pnl.el), card('Utilisation against break-even', util.el)),
    h('div', { class: 'grid-2' }, card('The last six months', trend.el), card('Energy and carbon per day (last 30 days)', energy.el)),
    card('P&L', groups),
    card('Payback per asset', payback),
    card('Buy or rent', buyRent),
  );
  const el = page(
    'Finance',
    toolbar(month, by),
    notice,
    body,
  );
  let history: { at: number; reports: Report[] } | null = null;

  async function refresh(): Promise<void> {
    if (!ctx.isOperator) {
      body.hidden = true;
      renderIf(notice, 'op', () => h('div', { class: 'notice', 'data-testid': 'finance-operator-only' }, h('strong', null, 'Finance is operator-only. '), 'The operator’s books (P&L, break-even, energy and carbon) are shown to operator admins.'));
      return;
    }
    let report: Report;
    try {
      report = await api<Report>(`/v1/finance/report${qs({ month: month.value, by: by.value })}`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 403) {
        body.hidden = true;
        renderIf(notice, 'op', () => h('div', { class: 'notice' }, 'Finance is operator-only.'));
        return;
      }
      throw e;
    }
    const [pay, bor, days] = await Promise.all([
      api<{ items: PaybackItem[] }>(`/v1/finance/payback${qs({ month: month.value })}`),
      api<{ items: BuyOrRentItem[] }>(`/v1/finance/buy-or-rent${qs({ month: month.value })}`),
      api<Usage>(`/v1/usage${qs({ group_by: 'day', from: fromDays(30) })}`),
    ]);
    if (!history || Date.now() - history.at > 30000) {
      const months = lastMonths(6);
      history = { at: Date.now(), reports: await Promise.all(months.map((m) => api<Report>(`/v1/finance/report${qs({ month: m, by: 'total' })}`))) };
    }
    const t = report.totals;
    const sum = (f: (g: Report['groups'][number]) => string) => report.groups.reduce((a, g) => a + Number(f(g)), 0);
    const avail = sum((g) => g.available_gpu_hours);
    const alloc = sum((g) => g.allocated_gpu_hours);
    // A month still running shows its costs to date (the part of each month's cost that has
    // passed) beside what the whole month comes to at the rate so far.
    const whole = t.whole_month_projected;
    const period = report.month_to_date ? `${report.month} to date` : report.month;
    replace(
      kpis,
      kpi('Revenue', money(t.revenue), `${money(t.credits)} credits · net ${money(t.net_revenue)}`, 'kpi-revenue'),
      kpi('Costs', money(t.costs), whole ? `${period} · whole month ${money(whole.costs)}` : 'depreciation, interest, power, colocation, other', 'kpi-costs'),
      kpi('Margin', h('span', { class: Number(t.margin) < 0 ? 'neg' : 'pos' }, money(t.margin)), whole ? `${period} · whole month ${money(whole.margin)}` : period, 'kpi-margin'),
      kpi('Utilisation', avail ? pct(alloc / avail) : '–', `${num(alloc, 1)} of ${num(avail, 1)} GPU-hours`),
      kpi('Energy', `${num(sum((g) => g.energy_kwh), 2)} kWh`, `${num(sum((g) => g.carbon_kg), 2)} kg CO2e`, 'kpi-energy'),
    );
    const keys = report.groups.map((g) => g.key);
    pnl.update(keys, [
      { label: 'Revenue', data: report.groups.map((g) => Number(g.revenue)), color: '#34d399' },
      { label: 'Costs', data: report.groups.map((g) => Number(g.costs)), color: '#f87171' },
      { label: 'Margin', data: report.groups.map((g) => Number(g.margin)), color: '#4f9cf9', type: 'line' },
    ]);
    // Above 100 % a group cannot break even at its price: the chart draws no point for it and
    // names it as the table does, rather than a point at 100 % that would look reachable.
    const reachable = (g: Report['groups'][number]) => g.break_even_utilisation !== null && Number(g.break_even_utilisation) <= 1;
    util.update(
      report.groups.map((g) => (g.break_even_utilisation !== null && !reachable(g) ? `${g.key} (not at this price)` : g.key)),
      [
        { label: 'Utilisation', data: report.groups.map((g) => Number(g.utilisation) * 100), color: '#4f9cf9' },
        { label: 'Break-even', data: report.groups.map((g) => (reachable(g) ? Number(g.break_even_utilisation) * 100 : null)), color: '#f59e0b', type: 'line' },
      ],
    );
    const hist = history.reports;
    trend.update(hist.map((r) => r.month), [
      { label: 'Net revenue', data: hist.map((r) => Number(r.totals.net_revenue)), color: '#34d399' },
      { label: 'Costs', data: hist.map((r) => Number(r.totals.costs)), color: '#f87171' },
      { label: 'Margin', data: hist.map((r) => Number(r.totals.margin)), color: '#4f9cf9', type: 'line' },
    ]);
    const labels = dayRange(30);
    const byDay = new Map(days.items.map((i) => [i.key, i]));
    energy.update(labels.map((d) => d.slice(5)), [
      { label: 'Energy (kWh)', data: labels.map((d) => Number(byDay.get(d)?.energy_kwh ?? 0)), color: '#f59e0b' },
      { label: 'Carbon (kg CO2e)', data: labels.map((d) => Number(byDay.get(d)?.carbon_kg ?? 0)), color: '#a78bfa', type: 'line', axis: 'y2' },
    ]);
    renderIf(groups, report, () =>
      table(
        report.groups,
        [
          { title: by.value, cell: (g) => h('strong', null, g.key) },
          { title: 'GPUs', cell: (g) => String(g.gpus), class: 'num' },
          moneyColumn('Revenue', (g) => g.revenue),
          moneyColumn('Depreciation', (g) => g.depreciation),
          moneyColumn('Interest + lease', (g) => addMoney(g.interest, g.lease)),
          moneyColumn('Power', (g) => g.power),
          moneyColumn('Colocation', (g) => g.colocation),
          moneyColumn('Other', (g) => g.other),
          moneyColumn('Costs', (g) => g.costs),
          { title: 'Margin', cell: (g) => h('span', { class: Number(g.margin) < 0 ? 'neg' : 'pos' }, money(g.margin)), class: 'num' },
          { title: 'Utilisation', cell: (g) => pct(g.utilisation), class: 'num' },
          { title: 'Break-even', cell: (g) => breakEven(g.break_even_utilisation), class: 'num' },
          moneyColumn('Idle cost', (g) => g.idle_cost),
          { title: 'Energy', cell: (g) => h('span', null, `${num(g.energy_kwh, 3)} kWh`, h('br'), h('span', { class: 'muted' }, `${num(g.carbon_kg, 3)} kg CO2e`)), class: 'num' },
        ],
        { empty: 'Nothing ran this month.' },
      ),
    );
    renderTable(
      payback,
      pay.items,
      [
        { title: 'Asset', cell: (a) => a.name },
        moneyColumn('Cost', (a) => a.cost),
        moneyColumn('Recovered', (a) => a.recovered),
        moneyColumn('Last month margin', (a) => a.last_month_margin),
        { title: 'Pays back', cell: (a) => (a.payback_month ? `${a.payback_month}${a.projected ? ' (projected)' : ''}` : 'not at this margin') },
      ],
      { empty: 'No asset recorded (POST /v1/finance/assets).' },
    );
    renderTable(
      buyRent,
      bor.items,
      [
        { title: 'Model', cell: (b) => b.gpu_model },
        moneyColumn('Owned costs', (b) => b.owned_costs),
        { title: 'Used / available h', cell: (b) => `${num(b.allocated_gpu_hours, 1)} / ${num(b.available_gpu_hours, 1)}`, class: 'num' },
        moneyColumn('Owned per used GPU-h', (b) => b.owned_per_used_gpu_hour, 4),
        { title: 'Cheapest rental', cell: (b) => (b.quotes[0] ? `${b.quotes[0].provider} ${money(b.quotes[0].price_per_gpu_hour, 4)}/h` : 'no rental price') },
      ],
      { empty: 'No GPU model owned.' },
    );
  }
  return { el, refresh, destroy: () => { pnl.destroy(); util.destroy(); trend.destroy(); energy.destroy(); } };
}

// The utilisation a group needs to cover its costs; above 100 % no utilisation would.
function breakEven(fraction: string | null): string {
  if (fraction !== null && Number(fraction) > 1) return 'not at this price';
  return pct(fraction);
}
