import { api, listAll, newIdempotencyKey } from '../api';
import type { Ctx, PageView } from '../context';
import { badge, card, errorText, h, kpi, link, page, renderIf, replace, table, type Column } from '../dom';
import { attempt } from '../forms';
import { addMoney, ago, duration, gpuRequest, money, shortId, time } from '../format';
import type { Instance, LaunchTemplate, Region } from '../types';

const STATES = ['queued', 'scheduled', 'starting', 'running', 'succeeded', 'failed', 'stopped', 'preempted', 'lost'];
export const LIVE_STATES = ['queued', 'scheduled', 'starting', 'running'];

// Splits a command line like a POSIX shell does for words and quotes (no expansions).
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} quote in the command`);
  if (inWord) words.push(word);
  return words;
}

export function stopButton(ctx: Ctx, instance: Instance, after: () => void): HTMLElement | null {
  if (!ctx.canLaunch || !LIVE_STATES.includes(instance.state)) return null;
  const button = h(
    'button',
    {
      class: 'btn btn-danger btn-small',
      'data-testid': 'stop',
      disabled: instance.stop_requested,
      onclick: async (e: Event) => {
        e.stopPropagation();
        if (!confirm(`Stop ${instance.id}?`)) return;
        button.disabled = true;
        const sent = await attempt(ctx, async () => {
          await api(`/v1/instances/${instance.id}/stop`, { method: 'POST' });
          ctx.toast(`Stop requested for ${instance.id}`);
          after();
        });
        if (!sent) button.disabled = false;
      },
    },
    instance.stop_requested ? 'Stopping…' : 'Stop',
  );
  return button;
}

const COMMAND_HINT = "python3 train.py --epochs 3   or   sh -c 'echo hello; sleep 3'";

function launchForm(ctx: Ctx, launched: (i: Instance) => void): { el: HTMLElement; setModels(models: string[]): void } {
  const project = h('select', { name: 'project', 'data-testid': 'launch-project' });
  const gpus = h('input', { type: 'number', name: 'gpus', min: 1, max: 8, value: 1, 'data-testid': 'launch-gpus' });
  const milli = h('input', { type: 'number', name: 'milli', min: 1, max: 999, placeholder: 'whole GPUs', 'data-testid': 'launch-milli' });
  const model = h('select', { name: 'gpu_type', 'data-testid': 'launch-gpu-type' }, h('option', { value: '' }, 'Any'));
  const klass = h(
    'select',
    { name: 'class', 'data-testid': 'launch-class' },
    ['on-demand', 'spot', 'reserved'].map((c) => h('option', { value: c }, c)),
  );
  const interactive = h('input', { type: 'checkbox', name: 'interactive' });
  const command = h('input', {
    type: 'text',
    name: 'command',
    class: 'mono',
    placeholder: COMMAND_HINT,
    required: true,
    'data-testid': 'launch-command',
  });
  // The operator's templates, if any: picking one sets the form's fields to the template's, and
  // its command is used unless one is typed (a request's fields override the template's).
  const template = h('select', { name: 'template', 'data-testid': 'launch-template' }, h('option', { value: '' }, 'None'));
  const templateField = h('label', { hidden: true }, 'Template', template);
  const templateNote = h('p', { class: 'muted wide', hidden: true, 'data-testid': 'launch-template-note' });
  const templates = new Map<string, LaunchTemplate>();
  const useTemplate = () => {
    const chosen = templates.get(template.value);
    templateNote.hidden = !chosen;
    command.required = !chosen?.fields.command;
    command.placeholder = chosen?.fields.command ? `from the template: ${(chosen.fields.command as string[]).join(' ')}` : COMMAND_HINT;
    if (!chosen) return;
    const f = chosen.fields;
    templateNote.textContent = [chosen.description, f.image ? `image ${String(f.image)}` : ''].filter(Boolean).join(' · ');
    milli.value = typeof f.gpu_milli === 'number' ? String(f.gpu_milli) : '';
    gpus.value = typeof f.gpus === 'number' ? String(f.gpus) : '1';
    klass.value = typeof f.price_class === 'string' ? f.price_class : 'on-demand';
    model.value = Array.isArray(f.gpu_models) && f.gpu_models.length === 1 ? String(f.gpu_models[0]) : '';
    interactive.checked = f.interactive === true;
    command.value = '';
  };
  template.addEventListener('change', useTemplate);
  void listAll<LaunchTemplate>('/v1/templates')
    .then((found) => {
      for (const t of found) templates.set(t.name, t);
      template.append(...found.map((t) => h('option', { value: t.name }, t.name)));
      templateField.hidden = found.length === 0;
    })
    .catch(() => undefined); // Without templates the form is whole.
  const error = h('div', { class: 'error', hidden: true, role: 'alert', 'data-testid': 'launch-error' });
  const submit = h('button', { class: 'btn btn-primary', type: 'submit', 'data-testid': 'launch-submit' }, 'Launch');
  const fillProjects = () => {
    const current = project.value;
    const mine = [...ctx.projects.values()].filter((p) => !p.deleted_at && (ctx.isOperator || p.tenant_id === ctx.me.tenant.id));
    const sig = mine.map((p) => p.id).join();
    if (project.dataset.sig === sig) return;
    project.dataset.sig = sig;
    replace(project, mine.map((p) => h('option', { value: p.id }, `${ctx.tenantName(p.tenant_id)} / ${p.name}`)));
    if (current) project.value = current;
  };
  fillProjects();
  const form = h(
    'form',
    {
      class: 'launch',
      'data-testid': 'launch-form',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        error.hidden = true;
        let argv: string[];
        try {
          argv = shellWords(command.value);
          if (!argv.length && !template.value) throw new Error('the command is empty');
        } catch (err) {
          error.textContent = (err as Error).message;
          error.hidden = false;
          return;
        }
        const body: Record<string, unknown> = { price_class: klass.value };
        if (argv.length) body.command = argv;
        if (template.value) body.template = template.value;
        if (project.value) body.project_id = project.value;
        if (milli.value) body.gpu_milli = Number(milli.value);
        else body.gpus = Number(gpus.value || 1);
        if (model.value) body.gpu_models = [model.value];
        if (interactive.checked) body.interactive = true;
        submit.disabled = true;
        const idempotencyKey = newIdempotencyKey('web');
        try {
          // Keyed, so that a launch whose answer a failover lost is asked for again, not made twice.
          const created = await api<Instance>('/v1/instances', { method: 'POST', body, idempotencyKey });
          ctx.toast(`Launched ${created.id}`);
          launched(created);
        } catch (err) {
          error.textContent = errorText(err);
          error.hidden = false;
        } finally {
          submit.disabled = false;
        }
      },
    },
    h('div', { class: 'form-grid' },
      h('label', null, 'Project', project),
      templateField,
      h('label', null, 'GPUs', gpus),
      h('label', null, 'or GPU milli (fraction)', milli),
      h('label', null, 'GPU type', model),
      h('label', null, 'Class', klass),
      h('label', { class: 'check' }, interactive, ' Interactive (until stopped)'),
    ),
    templateNote,
    h('label', { class: 'wide' }, 'Command', command),
    error,
    h('div', { class: 'form-actions' }, submit),
  );
  return {
    el: form,
    setModels(models: string[]) {
      fillProjects();
      const sig = models.join();
      if (model.dataset.sig === sig) return;
      model.dataset.sig = sig;
      const current = model.value;
      const families = [...new Set(models.map((m) => m.replace(/-.*/, '')))];
      replace(
        model,
        h('option', { value: '' }, 'Any'),
        h('optgroup', { label: 'Family' }, families.map((f) => h('option', { value: f }, f))),
        h('optgroup', { label: 'Model' }, models.map((m) => h('option', { value: m }, m))),
      );
      model.value = current;
    },
  };
}

// Every gang's members in rank order, by gang id.
function gangMembers(all: Instance[]): Map<string, Instance[]> {
  const gangs = new Map<string, Instance[]>();
  for (const i of all) {
    if (!i.gang_id) continue;
    const members = gangs.get(i.gang_id) ?? [];
    members.push(i);
    gangs.set(i.gang_id, members);
  }
  for (const members of gangs.values()) members.sort((a, b) => a.gang_rank - b.gang_rank);
  return gangs;
}

// An instance's id; a gang's row also lists its members, each with its state and node.
function instanceCell(i: Instance, members: Instance[] | undefined): HTMLElement {
  const id = link(`#/instances/${i.id}`, shortId(i.id));
  id.title = i.id;
  if (!members || members.length < 2) return id;
  return h(
    'div',
    null,
    id,
    h(
      'details',
      { class: 'gang', 'data-testid': 'gang-members' },
      h('summary', null, `gang of ${members.length}`),
      h(
        'ul',
        null,
        members.map((m) => h('li', { 'data-id': m.id, title: m.node_id ? `on ${m.node_id}` : 'not placed' }, `#${m.gang_rank} `, link(`#/instances/${m.id}`, shortId(m.id)), ' ', badge(m.state))),
      ),
    ),
  );
}

// What a gang's row has billed: the sum over its members, in micro-units.
function gangBilled(i: Instance, members: Instance[] | undefined): string {
  return members ? addMoney(...members.map((m) => m.billed)) : i.billed;
}

export function instancesPage(ctx: Ctx): PageView {
  let all: Instance[] = [];
  const stateFilter = h(
    'select',
    { 'data-testid': 'filter-state', onchange: () => render() },
    h('option', { value: '' }, 'All states'),
    h('option', { value: 'live' }, 'Live (queued … running)'),
    h('option', { value: 'ended' }, 'Ended'),
    STATES.map((s) => h('option', { value: s }, s)),
  );
  stateFilter.value = sessionStorage.getItem('allot.instances-state') ?? '';
  const text = h('input', {
    type: 'search',
    placeholder: 'Filter by id, project, tenant, command, node…',
    'data-testid': 'filter-text',
    oninput: () => render(),
  });
  const list = h('div', { 'data-testid': 'instance-list' });
  const queue = h('div', { 'data-testid': 'queue' });
  const kpis = h('div', { class: 'kpis' });
  const launch = launchForm(ctx, (i) => {
    location.hash = `#/instances/${i.id}`;
  });
  const launchCard = h('details', { class: 'card launch-card', open: ctx.canLaunch, 'data-testid': 'launch' }, h('summary', null, h('h2', null, 'Launch an instance')), launch.el);
  const el = page(
    'Instances',
    null,
    kpis,
    ctx.canLaunch ? launchCard : null,
    card('The queue', h('p', { class: 'muted' }, 'Queued work, oldest first, and why each one waits.'), queue),
    card('All instances', h('div', { class: 'toolbar' }, stateFilter, text), list),
  );

  function matches(i: Instance): boolean {
    const s = stateFilter.value;
    sessionStorage.setItem('allot.instances-state', s);
    if (s === 'live' && !LIVE_STATES.includes(i.state)) return false;
    if (s === 'ended' && LIVE_STATES.includes(i.state)) return false;
    if (s && s !== 'live' && s !== 'ended' && i.state !== s) return false;
    const q = text.value.trim().toLowerCase();
    if (!q) return true;
    const hay = [i.id, i.state, i.reason, i.node_id, ctx.projectName(i.project_id), ctx.tenantName(i.tenant_id), i.spec.command.join(' '), i.spec.gpu_models.join(' ')]
      .join(' ')
      .toLowerCase();
    return hay.includes(q);
  }

  function render(): void {
    const gangs = gangMembers(all);
    // A gang is one row, its rank 0's, shown when any of its members matches the filter.
    const rows = all
      .filter((i) => !i.gang_id || i.gang_rank === 0)
      .filter((i) => (gangs.get(i.gang_id) ?? [i]).some(matches))
      .sort((a, b) => b.created_at.localeCompare(a.created_at));
    const columns: (Column<Instance> | null)[] = [
          { title: 'Instance', cell: (i) => instanceCell(i, gangs.get(i.gang_id)), class: 'mono' },
          { title: 'State', cell: (i) => badge(i.state) },
          ctx.isOperator
            ? { title: 'Tenant / project', cell: (i) => `${ctx.tenantName(i.tenant_id)} / ${ctx.projectName(i.project_id)}` }
            : { title: 'Project', cell: (i) => ctx.projectName(i.project_id) },
          { title: 'GPUs', cell: (i) => `${gpuRequest(i.spec)}${i.spec.gpu_models.length ? ` ${i.spec.gpu_models.join('/')}` : ''}`, class: 'nowrap' },
          { title: 'Command', cell: (i) => h('code', { class: 'cmd', title: i.spec.command.join(' ') }, i.spec.command.join(' ')) },
          { title: 'Created', cell: (i) => h('span', { title: time(i.created_at) }, ago(i.created_at)), class: 'nowrap' },
          { title: 'Billed', cell: (i) => money(gangBilled(i, gangs.get(i.gang_id))), class: 'num' },
          { title: 'Why', cell: (i) => h('span', { class: 'reason' }, i.reason), class: 'why' },
          { title: '', cell: (i) => stopButton(ctx, i, () => void refresh()), class: 'actions' },
    ];
    renderIf(list, [rows, stateFilter.value, text.value], () => h('div', { class: 'compact' },
      table(
        rows,
        columns.filter((c): c is Column<Instance> => c !== null),
        { empty: all.length ? 'No instance matches the filter.' : 'No instance yet: launch one above.', testid: 'instances-table', rowAttrs: (i) => ({ 'data-id': i.id, 'data-state': i.state }) },
      )),
    );
    const waiting = all.filter((i) => i.state === 'queued').sort((a, b) => a.created_at.localeCompare(b.created_at));
    const now = Date.now();
    renderIf(queue, waiting.map((i) => [i.id, i.reason, Math.floor((now - Date.parse(i.created_at)) / 5000)]), () =>
      table(
        waiting,
        [
          { title: '#', cell: (i) => String(waiting.indexOf(i) + 1), class: 'num' },
          { title: 'Instance', cell: (i) => link(`#/instances/${i.id}`, shortId(i.id)), class: 'mono' },
          { title: 'Who', cell: (i) => `${ctx.tenantName(i.tenant_id)} / ${ctx.projectName(i.project_id)}` },
          { title: 'Asks', cell: (i) => `${gpuRequest(i.spec)} ${i.spec.gpu_models.join('/') || 'any'} · ${i.spec.price_class}` },
          { title: 'Waiting', cell: (i) => duration(now - Date.parse(i.created_at)) },
          { title: 'Why it waits', cell: (i) => h('span', { class: 'reason' }, i.reason || '–') },
        ],
        { empty: 'Nothing waits: every request found room.', testid: 'queue-table' },
      ),
    );
    const count = (s: string) => all.filter((i) => i.state === s).length;
    replace(
      kpis,
      kpi('Running', String(count('running')), `${count('scheduled') + count('starting')} starting`, 'kpi-running'),
      kpi('Queued', String(count('queued')), waiting.length ? `oldest ${duration(now - Date.parse(waiting[0].created_at))}` : 'none waiting', 'kpi-queued'),
      kpi('Succeeded', String(count('succeeded'))),
      kpi('Failed / lost', String(count('failed') + count('lost') + count('preempted'))),
      kpi('Stopped', String(count('stopped'))),
    );
  }

  async function refresh(): Promise<void> {
    const [instances, regions] = await Promise.all([
      listAll<Instance>('/v1/instances'),
      api<{ items: Region[] }>('/v1/regions').catch(() => ({ items: [] as Region[] })),
    ]);
    all = instances;
    launch.setModels([...new Set(regions.items.flatMap((r) => r.models.map((m) => m.gpu_model)))].sort());
    render();
  }

  return { el, refresh };
}
