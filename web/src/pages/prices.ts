import { api } from '../api';
import type { Ctx, PageView } from '../context';
import { badge, card, h, page, renderTable, type Child } from '../dom';
import { actionForm } from '../forms';
import { rate, time } from '../format';
import type { Price, Region, RegionModel } from '../types';

// A region's price for one class: what its work is charged now. Where a model is offered but has
// no price, work of that class is not placed there, so the cell says so rather than showing 0.
function offered(m: RegionModel | null | undefined, price: string | null | undefined, fromOnDemand = false): Child {
  if (!m) return '–';
  if (price === null || price === undefined) return h('span', { class: 'warn-text', title: 'Work of this class is not placed here until a price is set' }, 'no price');
  return fromOnDemand ? h('span', { title: 'No spot price: spot work is charged the on-demand price' }, `${rate(price)} (on-demand)`) : rate(price);
}

// A storage price has no GPU rates and a GPU price no storage rate.
function optionalRate(value: string | undefined): Child {
  return value === undefined ? '–' : rate(value);
}

export function pricesPage(ctx: Ctx): PageView {
  const prices = h('div', { 'data-testid': 'prices' });
  const regions = h('div', { 'data-testid': 'regions' });
  const model = h('input', { type: 'text', placeholder: 'H100-80GB', required: true, 'data-testid': 'price-model' });
  const region = h('input', { type: 'text', value: 'default', required: true, 'data-testid': 'price-region' });
  const klass = h('select', null, ['on-demand', 'spot', 'reserved'].map((c) => h('option', { value: c }, c)));
  const gpuHour = h('input', { type: 'text', placeholder: '2.50', required: true, 'data-testid': 'price-gpu-hour' });
  const form = ctx.isOperator
    ? actionForm(
        ctx,
        async () => {
          await api('/v1/prices', { method: 'PUT', body: { gpu_model: model.value.trim(), region: region.value.trim(), price_class: klass.value, gpu_hour: gpuHour.value.trim() } });
          ctx.toast('Price set: it applies from now on');
          await refresh();
        },
        model,
        region,
        klass,
        gpuHour,
        h('span', { class: 'muted' }, 'per GPU-hour'),
        h('button', { class: 'btn', type: 'submit' }, 'Set price'),
      )
    : null;
  const el = page(
    'Prices',
    null,
    card('Price catalog', h('p', { class: 'muted' }, 'Per GPU-hour, per model, region and class, and storage per GB-month per region (allot prices set --storage-gb-month); the price in force now and changes already scheduled.'), form, prices),
    card('Regions', regions),
  );

  async function refresh(): Promise<void> {
    const [p, r] = await Promise.all([api<{ items: Price[] }>('/v1/prices?limit=1000'), api<{ items: Region[] }>('/v1/regions')]);
    const rows = [...p.items].sort((a, b) => a.gpu_model.localeCompare(b.gpu_model) || a.region.localeCompare(b.region) || (a.price_class ?? '').localeCompare(b.price_class ?? '') || a.effective_at.localeCompare(b.effective_at));
    renderTable(
      prices,
      rows,
      [
        { title: 'GPU model', cell: (x) => h('strong', null, x.gpu_model) },
        { title: 'Region', cell: (x) => x.region },
        { title: 'Class', cell: (x) => x.price_class ?? '–' },
        { title: 'GPU-hour', cell: (x) => optionalRate(x.gpu_hour), class: 'num' },
        { title: 'CPU-hour', cell: (x) => optionalRate(x.cpu_hour), class: 'num' },
        { title: 'GiB-hour', cell: (x) => optionalRate(x.memory_gib_hour), class: 'num' },
        { title: 'Storage GB-month', cell: (x) => optionalRate(x.storage_gb_month), class: 'num' },
        { title: 'From', cell: (x) => time(x.effective_at) },
        { title: '', cell: (x) => (x.in_force ? badge('in force', 'running') : badge('scheduled', 'queued')) },
      ],
      { empty: 'No price set: no work is placed until one is (work is never run uncharged).', testid: 'prices-table' },
    );
    const regionRows: { reg: Region; m: RegionModel | null }[] = r.items.flatMap((reg) => (reg.models.length ? reg.models.map((m) => ({ reg, m: m as RegionModel | null })) : [{ reg, m: null }]));
    renderTable(
      regions,
      regionRows,
      [
        { title: 'Region', cell: (x) => h('strong', null, x.reg.region) },
        { title: 'GPU model', cell: (x) => x.m?.gpu_model ?? '–' },
        { title: 'GPUs', cell: (x) => String(x.m?.gpus ?? 0), class: 'num' },
        { title: 'Free', cell: (x) => String(x.m?.free_gpus ?? 0), class: 'num' },
        { title: 'On-demand', cell: (x) => offered(x.m, x.m?.on_demand_gpu_hour), class: 'num' },
        { title: 'Spot', cell: (x) => offered(x.m, x.m?.spot_gpu_hour, x.m?.spot_from_on_demand), class: 'num' },
        { title: 'Grid gCO2e/kWh', cell: (x) => (x.reg.carbon_g_per_kwh === null ? '–' : String(x.reg.carbon_g_per_kwh)), class: 'num' },
        { title: 'PUE', cell: (x) => x.reg.pue ?? '–', class: 'num' },
        { title: 'Latency', cell: (x) => Object.entries(x.reg.latency_ms).map(([k, v]) => `${k} ${v} ms`).join(', ') || '–' },
      ],
      { empty: 'No region yet.' },
    );
  }
  return { el, refresh };
}
