import { api, listAll } from '../api';
import type { Ctx, PageView } from '../context';
import { badge, card, h, link, page, renderIf, table } from '../dom';
import { actionForm, attempt } from '../forms';
import { shortId, time } from '../format';
import type { Volume } from '../types';

// A tenant's volumes: storage that outlives its instances, made here and mounted by launches
// (`allot run --volume NAME:/PATH`). Billed by size from creation to deletion.
export function volumesPage(ctx: Ctx): PageView {
  const list = h('div', { 'data-testid': 'volumes' });
  const name = h('input', { type: 'text', placeholder: 'ckpt', required: true, 'data-testid': 'volume-name' });
  const size = h('input', { type: 'number', min: '1', placeholder: 'GB', required: true, 'data-testid': 'volume-size' });
  const backend = h('select', { 'data-testid': 'volume-backend' }, ['local', 'nfs'].map((b) => h('option', { value: b }, b)));
  const region = h('input', { type: 'text', placeholder: 'region (optional)', 'data-testid': 'volume-region' });
  const form = ctx.canLaunch && !ctx.isOperator
    ? actionForm(
        ctx,
        async () => {
          const body: Record<string, unknown> = { name: name.value.trim(), size_gb: Number(size.value), backend: backend.value };
          if (region.value.trim()) body.region = region.value.trim();
          const made = await api<Volume>('/v1/volumes', { method: 'POST', body });
          ctx.toast(`Volume ${made.name} made in ${made.region}`);
          name.value = '';
          size.value = '';
          await refresh();
        },
        name,
        size,
        backend,
        region,
        h('button', { class: 'btn', type: 'submit', 'data-testid': 'volume-create' }, 'Make volume'),
      )
    : null;
  const el = page(
    'Volumes',
    null,
    card(
      'Volumes',
      h('p', { class: 'muted' }, 'Storage that outlives instances: mount one with allot run --volume NAME:/PATH[:ro]. A local volume lives on the node of its first instance; nfs on the region\'s export. Billed by size, from creation to deletion.'),
      form,
      list,
    ),
  );

  async function remove(v: Volume): Promise<void> {
    const done = await attempt(ctx, async () => {
      await api(`/v1/volumes/${v.id}`, { method: 'DELETE' });
      ctx.toast(`Volume ${v.name} deleted`);
    });
    if (done) await refresh();
  }

  async function refresh(): Promise<void> {
    const volumes = (await listAll<Volume>('/v1/volumes')).sort((a, b) => a.name.localeCompare(b.name));
    renderIf(list, volumes, () =>
      table(
        volumes,
        [
          { title: 'Name', cell: (v) => h('strong', null, v.name) },
          ...(ctx.isOperator ? [{ title: 'Tenant', cell: (v: Volume) => ctx.tenantName(v.tenant_id) }] : []),
          { title: 'Project', cell: (v) => ctx.projectName(v.project_id) },
          { title: 'Size', cell: (v) => `${v.size_gb.toLocaleString('en-US')} GB`, class: 'num' },
          { title: 'Region', cell: (v) => v.region },
          { title: 'Backend', cell: (v) => badge(v.backend, 'role') },
          { title: 'Node', cell: (v) => (v.node_id ? shortId(v.node_id) : '–'), class: 'mono' },
          { title: 'Mounted by', cell: (v) => (v.mounted_by.length ? h('span', null, ...v.mounted_by.map((id) => link(`#/instances/${id}`, shortId(id)))) : '–') },
          { title: 'Created', cell: (v) => time(v.created_at) },
          {
            title: '',
            cell: (v) =>
              ctx.canLaunch && !ctx.isOperator
                ? h('button', { class: 'btn btn-danger btn-small', type: 'button', 'data-testid': 'volume-delete', disabled: v.mounted_by.length > 0, title: v.mounted_by.length ? 'Mounted by work that has not ended' : 'Delete it and its data', onclick: () => remove(v) }, 'Delete')
                : null,
          },
        ],
        { empty: 'No volume yet.', testid: 'volumes-table', rowAttrs: (v) => ({ 'data-volume': v.name }) },
      ),
    );
  }

  return { el, refresh };
}
