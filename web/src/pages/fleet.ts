import { api, ApiError } from '../api';
import { palette } from '../charts';
import type { Ctx, PageView } from '../context';
import { badge, card, h, kpi, link, page, renderIf, replace, table, toolbar } from '../dom';
import { attempt } from '../forms';
import { ago, bytes, gpuRequest, num, shortId } from '../format';
import type { Page } from '../api';
import type { Gpu, Instance, NodeInfo } from '../types';

type Mode = 'state' | 'tenant' | 'util';
const ACTIVE = ['scheduled', 'starting', 'running'];

export function tenantColor(id: string): string {
  let hash = 0;
  for (const c of id) hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
  return palette[hash % palette.length];
}

function heat(pct: number): string {
  // From a cool slate at 0 % through green and amber to red at 100 %.
  const stops: [number, [number, number, number]][] = [
    [0, [51, 65, 85]],
    [35, [34, 197, 94]],
    [70, [234, 179, 8]],
    [100, [239, 68, 68]],
  ];
  const p = Math.max(0, Math.min(100, pct));
  for (let i = 1; i < stops.length; i++) {
    const [p1, c1] = stops[i];
    const [p0, c0] = stops[i - 1];
    if (p <= p1) {
      const t = (p - p0) / (p1 - p0);
      const c = c0.map((v, j) => Math.round(v + (c1[j] - v) * t));
      return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
    }
  }
  return 'rgb(239, 68, 68)';
}

export function gpuState(node: NodeInfo, gpu: Gpu): string {
  if (node.state === 'lost') return 'offline';
  if (!gpu.healthy) return 'unhealthy';
  if (gpu.used_milli >= 1000) return 'allocated';
  if (gpu.used_milli > 0) return 'partial';
  if (node.state === 'cordoned' || node.state === 'draining') return 'cordoned';
  return 'free';
}

const stateLegend: [string, string][] = [
  ['free', 'Free'],
  ['partial', 'Fraction in use'],
  ['allocated', 'Allocated'],
  ['cordoned', 'Cordoned / draining'],
  ['unhealthy', 'Unhealthy'],
  ['offline', 'Node lost'],
];

export function fleetPage(ctx: Ctx): PageView {
  let mode: Mode = (localStorage.getItem('allot.fleet-mode') as Mode) || 'state';
  let nodes: NodeInfo[] = [];
  let active: Instance[] = [];
  let queued = 0;
  let selected: { node: string; index: number } | null = null;
  let structure = '';
  const cells = new Map<string, HTMLElement>();
  const nodeHeads = new Map<string, HTMLElement>();

  const kpis = h('div', { class: 'kpis' });
  const select = h(
    'select',
    {
      'data-testid': 'colour-by',
      onchange: () => {
        mode = select.value as Mode;
        localStorage.setItem('allot.fleet-mode', mode);
        paint();
      },
    },
    h('option', { value: 'state' }, 'State'),
    h('option', { value: 'tenant' }, 'Tenant'),
    h('option', { value: 'util' }, 'Utilisation'),
  );
  select.value = mode;
  const legend = h('div', { class: 'legend', 'data-testid': 'legend' });
  const grid = h('div', { class: 'fleet', 'data-testid': 'fleet' });
  const detail = h('div', { class: 'detail', 'data-testid': 'gpu-detail' }, h('div', { class: 'muted' }, 'Click a GPU for its details.'));
  const tooltip = h('div', { class: 'tooltip', hidden: true });
  const notice = h('div');
  const el = page(
    'Fleet',
    ctx.isOperator ? toolbar(h('label', null, 'Colour by ', select)) : null,
    notice,
    kpis,
    h('div', { class: 'fleet-layout' }, h('div', null, legend, grid), detail),
    tooltip,
  );

  function onGpu(gpuKey: string): { node: NodeInfo; gpu: Gpu } | null {
    const [nodeId, index] = gpuKey.split('#');
    const node = nodes.find((n) => n.id === nodeId);
    const gpu = node?.gpus.find((g) => g.index === Number(index));
    return node && gpu ? { node, gpu } : null;
  }

  function instancesOn(node: NodeInfo, gpu: Gpu): Instance[] {
    return active.filter((i) => i.node_id === node.id && i.gpu_indices.includes(gpu.index));
  }

  function gpuDetails(node: NodeInfo, gpu: Gpu): HTMLElement {
    const on = instancesOn(node, gpu);
    const row = (k: string, v: unknown) => h('div', { class: 'kv' }, h('span', null, k), h('span', null, v as string));
    return h(
      'div',
      null,
      h('h3', null, `${node.name} · GPU ${gpu.index}`),
      row('Model', `${gpu.model} (${gpu.name})`),
      row('State', gpuState(node, gpu)),
      row('Utilisation', `${gpu.utilization_pct} %`),
      row('Power', `${num(gpu.power_mw / 1000, 0)} W`),
      row('Memory', `${bytes(gpu.memory_used_bytes)} / ${bytes(gpu.memory_bytes)}`),
      row('Temperature', `${gpu.temperature_c} °C`),
      row('Allocated', `${gpu.used_milli / 1000} GPU`),
      row('UUID', gpu.uuid),
      !gpu.healthy ? row('Health', gpu.health_reason || 'out of service') : null,
      h('h4', null, on.length ? 'Instances on it' : 'No instance on it'),
      on.map((i) =>
        h(
          'div',
          { class: 'on-gpu' },
          h('span', { class: 'swatch', style: { background: tenantColor(i.tenant_id) } }),
          link(`#/instances/${i.id}`, i.id),
          ' ',
          badge(i.state),
          h('div', { class: 'muted' }, `${ctx.tenantName(i.tenant_id)} / ${ctx.projectName(i.project_id)} · ${gpuRequest(i.spec)}`),
        ),
      ),
    );
  }

  function paint(): void {
    // Legend.
    if (mode === 'state') {
      replace(legend, stateLegend.map(([k, label]) => h('span', { class: 'legend-item' }, h('span', { class: `swatch cell-${k}` }), label)));
    } else if (mode === 'tenant') {
      const ids = [...new Set(active.map((i) => i.tenant_id))];
      replace(
        legend,
        ids.length
          ? ids.map((id) => h('span', { class: 'legend-item' }, h('span', { class: 'swatch', style: { background: tenantColor(id) } }), ctx.tenantName(id)))
          : h('span', { class: 'muted' }, 'No tenant holds a GPU now.'),
        h('span', { class: 'legend-item' }, h('span', { class: 'swatch cell-free' }), 'Free'),
      );
    } else {
      replace(
        legend,
        [0, 25, 50, 75, 100].map((p) => h('span', { class: 'legend-item' }, h('span', { class: 'swatch', style: { background: heat(p) } }), `${p} %`)),
      );
    }
    for (const node of nodes) {
      for (const gpu of node.gpus) {
        const cell = cells.get(`${node.id}#${gpu.index}`);
        if (!cell) continue;
        const state = gpuState(node, gpu);
        const on = instancesOn(node, gpu);
        cell.className = `cell cell-${state}`;
        cell.style.background = '';
        if (mode === 'tenant' && on.length) cell.style.background = tenantColor(on[0].tenant_id);
        if (mode === 'util' && state !== 'offline') cell.style.background = heat(gpu.utilization_pct);
        if (selected && selected.node === node.id && selected.index === gpu.index) cell.classList.add('selected');
        cell.dataset.state = state;
        cell.dataset.tenant = on[0]?.tenant_id ?? '';
        cell.dataset.instance = on.map((i) => i.id).join(' ');
        replace(
          cell,
          h('span', { class: 'cell-idx' }, String(gpu.index)),
          h('span', { class: 'cell-util' }, `${gpu.utilization_pct}%`),
          h('span', { class: 'cell-bar' }, h('span', { style: { width: `${gpu.utilization_pct}%` } })),
          on.length ? h('span', { class: 'cell-who' }, ctx.tenantName(on[0].tenant_id)) : h('span', { class: 'cell-who muted' }, gpu.model.replace(/-.*/, '')),
        );
      }
      const head = nodeHeads.get(node.id);
      if (head) {
        const used = node.gpus.reduce((a, g) => a + g.used_milli, 0) / 1000;
        replace(
          head,
          h('div', { class: 'node-title' }, h('strong', null, node.name), ' ', badge(node.state), node.admin !== 'none' ? badge(node.admin) : null),
          h(
            'div',
            { class: 'node-meta' },
            `${node.region} · ${[...new Set(node.gpus.map((g) => g.model))].join(', ')} · ${node.runtime === 'process' ? 'host processes' : 'containers'} · ${num(used, 2)}/${node.gpus.length} GPUs · CPU ${num(node.used_cpu_milli / 1000)}/${num(node.cpu_milli / 1000)} · heartbeat ${ago(node.last_heartbeat_at)}`,
          ),
          ctx.isOperator ? nodeActions(node) : null,
        );
      }
    }
    const sel = selected ? onGpu(`${selected.node}#${selected.index}`) : null;
    if (sel) replace(detail, gpuDetails(sel.node, sel.gpu));
  }

  function nodeActions(node: NodeInfo): HTMLElement {
    const act = (what: string) =>
      attempt(ctx, async () => {
        await api(`/v1/nodes/${node.id}/${what}`, { method: 'POST' });
        ctx.toast(`${node.name}: ${what} sent`);
        await refresh();
      });
    const cordoned = node.admin !== 'none' || node.state === 'cordoned' || node.state === 'draining';
    return h(
      'div',
      { class: 'node-actions' },
      cordoned
        ? h('button', { class: 'btn btn-small', onclick: () => act('uncordon') }, 'Uncordon')
        : [h('button', { class: 'btn btn-small', onclick: () => act('cordon') }, 'Cordon'), h('button', { class: 'btn btn-small', onclick: () => act('drain') }, 'Drain')],
    );
  }

  function build(): void {
    cells.clear();
    nodeHeads.clear();
    if (!nodes.length) {
      replace(grid, h('div', { class: 'empty' }, 'No node has joined yet. Create a join token and start allot-agent on a GPU server.'));
      return;
    }
    replace(
      grid,
      nodes.map((node) => {
        const head = h('div', { class: 'node-head' });
        nodeHeads.set(node.id, head);
        return h(
          'div',
          { class: 'node', 'data-node': node.name },
          head,
          h(
            'div',
            { class: 'cells' },
            node.gpus.map((gpu) => {
              const key = `${node.id}#${gpu.index}`;
              const cell = h('button', {
                class: 'cell',
                'data-testid': 'gpu-cell',
                'data-gpu': key,
                onclick: () => {
                  selected = { node: node.id, index: gpu.index };
                  paint();
                },
                onmouseenter: (e: MouseEvent) => {
                  const info = onGpu(key);
                  if (!info) return;
                  replace(tooltip, gpuDetails(info.node, info.gpu));
                  tooltip.hidden = false;
                  place(e);
                },
                onmousemove: (e: MouseEvent) => place(e),
                onmouseleave: () => {
                  tooltip.hidden = true;
                },
              });
              cells.set(key, cell);
              return cell;
            }),
          ),
        );
      }),
    );
  }

  function place(e: MouseEvent): void {
    const x = Math.min(e.clientX + 16, window.innerWidth - 340);
    const y = Math.min(e.clientY + 16, window.innerHeight - tooltip.offsetHeight - 8);
    tooltip.style.left = `${x}px`;
    tooltip.style.top = `${y}px`;
  }

  function renderKpis(): void {
    const gpus = nodes.flatMap((n) => n.gpus.map((g) => ({ n, g })));
    const allocated = gpus.reduce((a, { g }) => a + g.used_milli, 0) / 1000;
    const live = gpus.filter(({ n }) => n.state !== 'lost');
    const util = live.length ? live.reduce((a, { g }) => a + g.utilization_pct, 0) / live.length : 0;
    const power = live.reduce((a, { g }) => a + g.power_mw, 0) / 1e6;
    replace(
      kpis,
      kpi('Nodes', `${nodes.filter((n) => n.state === 'ready').length} / ${nodes.length}`, 'ready / joined', 'kpi-nodes'),
      kpi('GPUs allocated', `${num(allocated, 2)} / ${gpus.length}`, gpus.length ? `${((allocated / gpus.length) * 100).toFixed(0)} % of the fleet` : '', 'kpi-gpus'),
      kpi('Mean utilisation', `${util.toFixed(0)} %`, 'as the GPUs read'),
      kpi('Power draw', `${power.toFixed(2)} kW`, 'GPU boards now'),
      kpi('Instances', String(active.length), `${queued} queued`),
    );
  }

  async function refresh(): Promise<void> {
    const [running, scheduled, starting, waiting] = await Promise.all(
      ['running', 'scheduled', 'starting', 'queued'].map((s) => api<Page<Instance>>(`/v1/instances?state=${s}&limit=1000`)),
    );
    active = [...running.items, ...scheduled.items, ...starting.items];
    queued = waiting.items.length;
    if (!ctx.isOperator) {
      renderTenantView();
      return;
    }
    try {
      nodes = (await api<Page<NodeInfo>>('/v1/nodes?limit=1000')).items;
    } catch (e) {
      if (e instanceof ApiError && e.status === 403) {
        renderTenantView();
        return;
      }
      throw e;
    }
    nodes.sort((a, b) => a.name.localeCompare(b.name));
    const sig = nodes.map((n) => `${n.id}:${n.gpus.map((g) => g.index).join(',')}`).join('|');
    if (sig !== structure) {
      structure = sig;
      build();
    }
    renderKpis();
    paint();
  }

  function renderTenantView(): void {
    renderIf(notice, 'operator-only', () =>
      h(
        'div',
        { class: 'notice', 'data-testid': 'fleet-operator-only' },
        h('strong', null, 'The fleet is operator-only. '),
        'Nodes and their GPUs are shown to operator admins. Here is where your own work runs.',
      ),
    );
    replace(kpis, kpi('Your instances on GPUs', String(active.length), `${queued} queued`, 'kpi-instances'));
    replace(legend);
    detail.hidden = true;
    renderIf(grid, active.map((i) => [i.id, i.state, i.node_id, i.gpu_indices]), () =>
      card(
        'Your running work',
        table(
          active,
          [
            { title: 'Instance', cell: (i) => link(`#/instances/${i.id}`, i.id) },
            { title: 'State', cell: (i) => badge(i.state) },
            { title: 'Project', cell: (i) => ctx.projectName(i.project_id) },
            { title: 'GPUs', cell: (i) => gpuRequest(i.spec) },
            { title: 'Node', cell: (i) => (i.node_id ? shortId(i.node_id) : '–'), class: 'mono' },
            { title: 'GPU indices', cell: (i) => i.gpu_indices.join(', ') || '–' },
          ],
          { empty: 'None of your instances holds a GPU now.', testid: 'tenant-placements' },
        ),
      ),
    );
  }

  return { el, refresh, destroy: () => tooltip.remove() };
}

export { ACTIVE };
