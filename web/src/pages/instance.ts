import { api } from '../api';
import type { Ctx, PageView } from '../context';
import { badge, card, h, link, renderIf, replace, table } from '../dom';
import { ago, duration, gpuRequest, money, num, rate, shortId, time } from '../format';
import { openShell, type ShellView } from '../shell';
import type { Instance, Logs, PortList } from '../types';
import { LIVE_STATES, stopButton } from './instances';

const MAX_LOG_CHARS = 512 * 1024;

export function instancePage(ctx: Ctx, params: string[]): PageView {
  const id = params[0];
  let instance: Instance | null = null;
  let offset: number | null = null;
  let ended = false;
  let logTimer: number | undefined;
  let reading = false;

  const head = h('div', { class: 'page-head' });
  const why = h('div');
  const facts = h('div', { class: 'facts', 'data-testid': 'instance-facts' });
  const events = h('div', { 'data-testid': 'instance-events' });
  const logs = h('pre', { class: 'logs', 'data-testid': 'logs' });
  const follow = h('input', { type: 'checkbox', checked: true, 'data-testid': 'follow', onchange: () => schedule() });
  const logState = h('span', { class: 'muted', 'data-testid': 'log-state' });
  const ports = h('div', { 'data-testid': 'instance-ports' });
  const shellBox = h('div', { class: 'shell', 'data-testid': 'shell' });
  const shellState = h('span', { class: 'muted', 'data-testid': 'shell-state' });
  let shell: ShellView | null = null;
  let portsShown = '';
  const shellButton = h('button', {
    class: 'btn btn-small',
    'data-testid': 'open-shell',
    onclick: async () => {
      shell?.close();
      shellBox.textContent = '';
      shellState.textContent = '· connecting';
      try {
        shell = await openShell(id, shellBox, (text) => {
          shellState.textContent = `· ${text}`;
        });
        shellState.textContent = '· connected';
      } catch (e) {
        shellState.textContent = `· ${(e as Error).toString()}`;
      }
    },
  }, 'Open shell');
  const el = h(
    'div',
    { class: 'page' },
    h('div', { class: 'crumbs' }, link('#/instances', '← Instances')),
    head,
    why,
    h('div', { class: 'grid-2' }, card('Details', facts), card('Events', events)),
    card('Ports', ports),
    card(h('span', null, 'Shell ', shellState), h('div', { class: 'toolbar' }, shellButton), shellBox),
    card(
      h('span', null, 'Logs ', logState),
      h('div', { class: 'toolbar' }, h('label', { class: 'check' }, follow, ' Follow'), h('button', { class: 'btn btn-small btn-ghost', onclick: () => { logs.textContent = ''; } }, 'Clear view')),
      logs,
    ),
  );

  async function readLogs(): Promise<void> {
    if (reading) return;
    reading = true;
    try {
      for (let round = 0; round < 8; round++) {
        const path = offset === null ? `/v1/instances/${id}/logs?tail=500` : `/v1/instances/${id}/logs?offset=${offset}`;
        const chunk = await api<Logs>(path);
        if (chunk.data) {
          const atBottom = logs.scrollHeight - logs.scrollTop - logs.clientHeight < 40;
          let text = (logs.textContent ?? '') + chunk.data;
          if (text.length > MAX_LOG_CHARS) text = text.slice(text.length - MAX_LOG_CHARS);
          logs.textContent = text;
          if (follow.checked && atBottom) logs.scrollTop = logs.scrollHeight;
        }
        offset = chunk.next_offset;
        ended = chunk.ended && !chunk.data;
        logState.textContent = `· ${num(chunk.size, 0)} bytes${ended ? ' · ended' : follow.checked ? ' · following' : ''}`;
        if (!chunk.data || chunk.next_offset >= chunk.size) break;
      }
    } finally {
      reading = false;
    }
  }

  function schedule(): void {
    if (logTimer !== undefined) clearInterval(logTimer);
    logTimer = undefined;
    if (follow.checked) logTimer = window.setInterval(() => { if (!ended) void readLogs().catch(() => undefined); }, 1000);
  }

  function render(i: Instance): void {
    renderIf(head, [i.state, i.stop_requested], () => [
      h('h1', { class: 'mono' }, i.id),
      h('div', { class: 'toolbar' }, h('span', { 'data-testid': 'instance-state' }, badge(i.state)), i.stop_requested && LIVE_STATES.includes(i.state) ? badge('stop requested', 'stopping') : null, stopButton(ctx, i, () => void refresh())),
    ]);
    renderIf(why, [i.state, i.reason], () =>
      i.reason
        ? h('div', { class: i.state === 'queued' ? 'notice notice-warn' : 'notice', 'data-testid': 'instance-reason' }, h('strong', null, i.state === 'queued' ? 'Why it waits: ' : 'Reason: '), i.reason)
        : null,
    );
    const row = (k: string, v: unknown) => h('div', { class: 'kv' }, h('span', null, k), h('span', null, v as string));
    const now = Date.now();
    const ran = i.started_at ? (i.ended_at ? Date.parse(i.ended_at) : now) - Date.parse(i.started_at) : 0;
    renderIf(facts, [i, Math.floor(now / 5000)], () => [
      row('Tenant / project', `${ctx.tenantName(i.tenant_id)} / ${ctx.projectName(i.project_id)}`),
      i.spec.from_template ? row('Template', i.spec.from_template) : null,
      row('Command', h('code', { class: 'cmd' }, i.spec.command.join(' '))),
      row('GPUs', `${gpuRequest(i.spec)} · ${i.spec.gpu_models.join(', ') || 'any model'} · ${i.spec.price_class}${i.spec.interactive ? ' · interactive' : ''}`),
      row('Placed on', i.node_id ? `${shortId(i.node_id)} · GPU ${i.gpu_indices.join(', ')}` : '–'),
      i.gang_id ? row('Gang', `${i.gang_id} rank ${i.gang_rank}`) : null,
      row('Created', `${time(i.created_at)} (${ago(i.created_at)})`),
      row('Started', time(i.started_at)),
      row('Ended', time(i.ended_at)),
      row('Run time', ran ? duration(ran) : '–'),
      row('Exit code', i.exit_code >= 0 ? String(i.exit_code) : '–'),
      row('Billed', money(i.billed, 4)),
      row('Energy / carbon', `${rate(i.energy_kwh)} kWh · ${rate(i.carbon_kg)} kg CO2e`),
      i.idle_since ? row('Idle since', time(i.idle_since)) : null,
    ]);
    renderIf(events, i.events ?? [], () =>
      table(
        [...(i.events ?? [])].reverse(),
        [
          { title: 'At', cell: (e) => time(e.at), class: 'nowrap' },
          { title: 'State', cell: (e) => badge(e.state) },
          { title: 'What happened', cell: (e) => e.message },
        ],
        { empty: 'No event yet.' },
      ),
    );
  }

  // Each published port's link, signed so that a new tab gets in without the key.
  async function showPorts(i: Instance): Promise<void> {
    const shown = `${i.state}/${(i.spec.ports ?? []).map((p) => p.port).join(',')}/${Math.floor(Date.now() / 600_000)}`;
    if (shown === portsShown) return;
    portsShown = shown;
    if (!(i.spec.ports ?? []).length) {
      replace(ports, h('span', { class: 'muted' }, 'No published port (allot run --port PORT).'));
      return;
    }
    const list = await api<PortList>(`/v1/instances/${id}/ports`);
    replace(
      ports,
      table(list.items, [
        { title: 'Port', cell: (p) => String(p.port) },
        { title: 'Protocol', cell: (p) => p.protocol },
        { title: 'Public', cell: (p) => (p.public ? 'yes' : 'no') },
        {
          title: 'Open',
          cell: (p) =>
            i.state === 'running'
              ? h('a', { href: p.link ?? p.path, target: '_blank', rel: 'noopener', 'data-testid': `port-link-${p.port}` }, p.path)
              : h('span', { class: 'muted' }, 'while it runs'),
        },
      ]),
    );
  }

  async function refresh(): Promise<void> {
    instance = await api<Instance>(`/v1/instances/${id}`);
    render(instance);
    shellButton.disabled = instance.state !== 'running';
    await showPorts(instance);
    if (!ended || LIVE_STATES.includes(instance.state)) await readLogs();
  }

  replace(head, h('h1', { class: 'mono' }, id));
  schedule();
  return {
    el,
    refresh,
    destroy: () => {
      if (logTimer !== undefined) clearInterval(logTimer);
      shell?.close();
    },
  };
}
