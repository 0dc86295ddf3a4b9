import { api, listAll } from '../api';
import type { Ctx, PageView } from '../context';
import { badge, card, h, kpi, link, page, renderIf, replace, table } from '../dom';
import { actionForm, attempt } from '../forms';
import { ago, money, num, shortId, time } from '../format';
import type { Service, ServiceMargin } from '../types';

// A service's replica count as people read it: ready of wanted, within its range.
function replicasText(s: Service): string {
  return `${s.ready_replicas} ready of ${s.desired} (${s.min_replicas}–${s.max_replicas})`;
}

function rolloutBadge(s: Service): HTMLElement {
  return badge(`rev ${s.revision} ${s.rollout.state}`, s.rollout.state === 'failed' ? 'failed' : s.rollout.state === 'done' ? 'running' : 'queued');
}

// Tenants' services: endpoints served over replicas at /s/SERVICE/, made here or with
// `allot services create`; each row leads to its replicas, revisions and margin.
export function servicesPage(ctx: Ctx): PageView {
  const list = h('div', { 'data-testid': 'services' });
  const field = (placeholder: string, testid: string, type = 'text') => h('input', { type, placeholder, 'data-testid': testid });
  const name = field('chat', 'service-name');
  const port = field('port', 'service-port', 'number');
  const gpus = field('GPUs', 'service-gpus', 'number');
  const replicas = field('replicas 1:4', 'service-replicas');
  const model = field('model (optional)', 'service-model');
  const command = field('command, e.g. python3 -m http.server 8000', 'service-command');
  const form = ctx.canLaunch && !ctx.isOperator
    ? actionForm(
        ctx,
        async () => {
          const [min, max] = (replicas.value.trim() || '1').split(':').map(Number);
          const body: Record<string, unknown> = {
            name: name.value.trim(),
            port: Number(port.value),
            min_replicas: min,
            max_replicas: max ?? min,
            replica: { gpus: Number(gpus.value || '1'), command: command.value.trim().split(/\s+/).filter(Boolean) },
          };
          if (model.value.trim()) body.model = model.value.trim();
          const made = await api<Service>('/v1/services', { method: 'POST', body });
          ctx.toast(`Service ${made.name} made: ${made.url}`);
          name.value = '';
          await refresh();
        },
        name, port, gpus, replicas, model, command,
        h('button', { class: 'btn', type: 'submit', 'data-testid': 'service-create' }, 'Make service'),
      )
    : null;
  const el = page(
    'Services',
    null,
    card(
      'Services',
      h('p', { class: 'muted' }, 'HTTP endpoints served over replicas (each an instance, billed as one) at /s/NAME/, balanced over ready replicas, scaled with traffic and to zero, and rolled over to new revisions. Shared services bill other tenants per request and per token.'),
      form,
      list,
    ),
  );

  async function refresh(): Promise<void> {
    const services = (await listAll<Service>('/v1/services')).sort((a, b) => a.name.localeCompare(b.name));
    renderIf(list, services, () =>
      table(
        services,
        [
          { title: 'Name', cell: (s) => link(`#/services/${s.id}`, h('strong', null, s.name)) },
          ...(ctx.isOperator ? [{ title: 'Tenant', cell: (s: Service) => ctx.tenantName(s.tenant_id) }] : []),
          { title: 'Model', cell: (s) => s.model ?? '–' },
          { title: 'Replicas', cell: (s) => replicasText(s), class: 'num' },
          { title: 'Rollout', cell: (s) => rolloutBadge(s) },
          { title: 'Req/s', cell: (s) => num(s.traffic.rps), class: 'num' },
          { title: 'Callers', cell: (s) => (s.shared ? `shared: ${money(s.price_per_request, 6)}/req, ${money(s.price_per_1k_tokens, 6)}/1k tok` : 'own keys only') },
          { title: 'URL', cell: (s) => h('span', { class: 'mono' }, s.url) },
        ],
        { empty: 'No service yet.', testid: 'services-table', rowAttrs: (s) => ({ 'data-service': s.name }) },
      ),
    );
  }

  return { el, refresh };
}

// One service: its replicas with their health, its revisions and rollout, its traffic, and what
// other tenants' calls earned against its GPU cost.
export function servicePage(ctx: Ctx, params: string[]): PageView {
  const id = params[0];
  const head = h('div', { class: 'page-head' });
  const kpis = h('div', { class: 'kpis', 'data-testid': 'service-kpis' });
  const replicas = h('div', { 'data-testid': 'service-replicas' });
  const revisions = h('div', { 'data-testid': 'service-revisions' });
  const margin = h('div', { 'data-testid': 'service-margin' });
  const el = h(
    'div',
    { class: 'page' },
    h('div', { class: 'crumbs' }, link('#/services', '← Services')),
    head,
    kpis,
    card('Replicas', replicas),
    h('div', { class: 'grid-2' }, card('Revisions', revisions), card('Margin this month', margin)),
  );

  async function remove(s: Service): Promise<void> {
    const done = await attempt(ctx, async () => {
      await api(`/v1/services/${s.id}`, { method: 'DELETE' });
      ctx.toast(`Service ${s.name} deleted: its replicas stop`);
    });
    if (done) location.hash = '#/services';
  }

  async function refresh(): Promise<void> {
    const s = await api<Service>(`/v1/services/${id}`);
    replace(
      head,
      h('h1', null, s.name, ' ', rolloutBadge(s)),
      ctx.canLaunch ? h('button', { class: 'btn btn-danger btn-small', type: 'button', 'data-testid': 'service-delete', onclick: () => remove(s) }, 'Delete') : null,
    );
    renderIf(kpis, [s.ready_replicas, s.desired, s.traffic, s.restarts, s.scale_reason, s.rollout], () => [
      kpi('Replicas', replicasText(s), s.scale_reason, 'service-replica-count'),
      kpi('Traffic', `${num(s.traffic.rps)} req/s`, `${s.traffic.in_flight} in flight, ${s.traffic.held} waiting · last ${ago(s.traffic.last_request_at)}`),
      kpi('Rollout', `revision ${s.revision}`, s.rollout.reason),
      kpi('Restarts', String(s.restarts), 'replicas that ended or failed their probes'),
    ]);
    renderIf(replicas, s.replicas, () =>
      table(
        s.replicas,
        [
          { title: 'Replica', cell: (r) => link(`#/instances/${r.instance_id}`, shortId(r.instance_id)), class: 'mono' },
          { title: 'Revision', cell: (r) => String(r.revision), class: 'num' },
          { title: 'State', cell: (r) => badge(r.state) },
          { title: 'Health', cell: (r) => (r.draining ? badge('draining', 'queued') : r.ready ? badge('ready', 'running') : badge('not ready', 'failed')) },
          { title: 'In flight', cell: (r) => String(r.in_flight), class: 'num' },
          { title: 'Served', cell: (r) => String(r.served), class: 'num' },
          { title: 'Last probe', cell: (r) => r.last_probe ?? r.reason ?? '–' },
          { title: 'Node', cell: (r) => (r.node_id ? shortId(r.node_id) : '–'), class: 'mono' },
        ],
        { empty: s.desired === 0 ? 'At zero replicas: the next request starts one.' : 'No replica yet.', testid: 'service-replicas-table', rowAttrs: (r) => ({ 'data-replica': r.instance_id }) },
      ),
    );
    renderIf(revisions, s.revisions, () =>
      table(
        [...s.revisions].reverse(),
        [
          { title: 'Revision', cell: (r) => (r.number === s.serving_revision ? h('strong', null, `${r.number} (serving)`) : String(r.number)) },
          { title: 'Image', cell: (r) => h('span', { class: 'mono' }, r.image || '–') },
          { title: 'Port', cell: (r) => String(r.port), class: 'num' },
          { title: 'Readiness', cell: (r) => h('span', { class: 'mono' }, r.readiness) },
          { title: 'Made', cell: (r) => time(r.created_at) },
        ],
        { testid: 'service-revisions-table' },
      ),
    );
    const m = await api<ServiceMargin>(`/v1/services/${id}/margin`);
    renderIf(margin, m, () => [
      h('div', { class: 'kpis' },
        kpi('Revenue', money(m.revenue, 6), `${m.requests} requests, ${m.tokens} tokens${m.malformed ? `, ${m.malformed} unreadable` : ''}`, 'service-revenue'),
        kpi('GPU cost', money(m.gpu_cost, 6), `${m.replica_gpu_hours} GPU-hours of replicas`),
        kpi('Margin', money(m.margin, 6), m.owed !== '0.000000' ? `${money(m.owed, 6)} owed by callers` : 'all paid', 'service-margin-value')),
      s.shared
        ? table(
            m.callers,
            [
              { title: 'Caller', cell: (c) => c.tenant ?? c.tenant_id },
              { title: 'Requests', cell: (c) => String(c.requests), class: 'num' },
              { title: 'Tokens', cell: (c) => String(c.tokens), class: 'num' },
              { title: 'Charged', cell: (c) => money(c.charged, 6), class: 'num' },
              { title: 'Owed', cell: (c) => money(c.owed, 6), class: 'num' },
            ],
            { empty: 'No caller of another tenant yet.', testid: 'service-callers' },
          )
        : h('p', { class: 'muted' }, 'Not shared: only this tenant\'s keys reach it. Share it (allot services update NAME --shared yes --price-per-request ...) to bill other tenants per use.'),
    ]);
  }

  return { el, refresh };
}
