import { api, apiText, listAll } from '../api';
import type { Ctx, PageView } from '../context';
import { badge, card, h, kpi, link, page, renderIf, renderTable, replace } from '../dom';
import { actionForm, attempt } from '../forms';
import { money, thisMonth, time } from '../format';
import type { Invoice } from '../types';

export function invoicesPage(ctx: Ctx): PageView {
  const list = h('div', { 'data-testid': 'invoice-list' });
  const tenant = h('select', { 'data-testid': 'draft-tenant' });
  const month = h('input', { type: 'month', value: thisMonth(), 'data-testid': 'draft-month' });
  const draft = ctx.isOperator
    ? actionForm(
        ctx,
        async () => {
          const inv = await api<Invoice>('/v1/invoices', { method: 'POST', body: { tenant_id: tenant.value, month: month.value } });
          ctx.toast(`Drafted ${inv.id}`);
          location.hash = `#/invoices/${inv.id}`;
        },
        tenant,
        month,
        h('button', { class: 'btn', type: 'submit', 'data-testid': 'draft-submit' }, 'Draft invoice'),
        h('span', { class: 'muted' }, 'Re-drafting a draft refreshes its lines.'),
      )
    : null;
  const el = page('Invoices', null, card('Invoices', draft, list));

  async function refresh(): Promise<void> {
    const invoices = (await listAll<Invoice>('/v1/invoices')).sort((a, b) => b.month.localeCompare(a.month) || a.id.localeCompare(b.id));
    const tenants = [...ctx.tenants.values()].filter((t) => !t.is_operator).sort((a, b) => a.name.localeCompare(b.name));
    const sig = tenants.map((t) => t.id).join();
    if (tenant.dataset.sig !== sig) {
      tenant.dataset.sig = sig;
      const v = tenant.value;
      replace(tenant, tenants.map((t) => h('option', { value: t.id }, t.name)));
      if (v) tenant.value = v;
    }
    renderTable(
      list,
      invoices,
      [
        { title: 'Number', cell: (i) => link(`#/invoices/${i.id}`, i.number ?? 'draft') },
        { title: 'Tenant', cell: (i) => ctx.tenantName(i.tenant_id) },
        { title: 'Month', cell: (i) => i.month },
        { title: 'Status', cell: (i) => badge(i.status) },
        { title: 'Lines', cell: (i) => String(i.lines.length), class: 'num' },
        { title: 'Total', cell: (i) => money(i.total), class: 'num' },
        { title: 'Amount due', cell: (i) => money(i.amount_due), class: 'num' },
        { title: 'Drafted', cell: (i) => time(i.drafted_at) },
        { title: 'Id', cell: (i) => link(`#/invoices/${i.id}`, i.id), class: 'mono' },
      ],
      { empty: 'No invoice yet.', testid: 'invoices-table', rowAttrs: (i) => ({ 'data-id': i.id }) },
    );
  }
  return { el, refresh };
}

export function invoicePage(ctx: Ctx, params: string[]): PageView {
  const id = params[0];
  const head = h('div', { class: 'page-head' }, h('h1', null, 'Invoice'));
  const kpis = h('div', { class: 'kpis' });
  const frame = h('iframe', { class: 'invoice-frame', title: 'Printable invoice', sandbox: 'allow-same-origin allow-modals', 'data-testid': 'invoice-frame' });
  let html = '';
  let shown = '';
  const print = h('button', { class: 'btn btn-primary', 'data-testid': 'print', onclick: () => frame.contentWindow?.print() }, 'Print');
  const open = h('button', {
    class: 'btn',
    onclick: () => {
      const url = URL.createObjectURL(new Blob([html], { type: 'text/html' }));
      window.open(url, '_blank', 'noopener');
      setTimeout(() => URL.revokeObjectURL(url), 60000);
    },
  }, 'Open in a new tab');
  const csv = h('button', {
    class: 'btn',
    onclick: () =>
      attempt(ctx, async () => {
        const text = await apiText(`/v1/invoices/${id}?format=csv`);
        const a = h('a', { href: URL.createObjectURL(new Blob([text], { type: 'text/csv' })), download: `${id}.csv` });
        a.click();
      }),
  }, 'Download CSV');
  const actions = h('div', { class: 'toolbar' });
  const el = h('div', { class: 'page' }, h('div', { class: 'crumbs' }, link('#/invoices', '← Invoices')), head, kpis, h('div', { class: 'toolbar' }, print, open, csv, actions), frame);

  function act(what: string, label: string): HTMLElement {
    return h('button', {
      class: 'btn',
      onclick: async () => {
        if (!confirm(`${label} this invoice?`)) return;
        await attempt(ctx, async () => {
          await api(`/v1/invoices/${id}/${what}`, { method: 'POST' });
          ctx.toast(`${label}: done`);
          shown = '';
          await refresh();
        });
      },
    }, label);
  }

  async function refresh(): Promise<void> {
    const inv = await api<Invoice>(`/v1/invoices/${id}`);
    renderIf(head, [inv.number, inv.status], () => [
      h('h1', null, `Invoice ${inv.number ?? '(draft)'} · ${ctx.tenantName(inv.tenant_id)} · ${inv.month}`),
      badge(inv.status),
    ]);
    replace(
      kpis,
      kpi('Subtotal', money(inv.subtotal)),
      kpi('Credits', money(inv.credits)),
      kpi('Total', money(inv.total), undefined, 'invoice-total'),
      kpi('Credited', money(inv.credited)),
      kpi('Paid', money(inv.paid)),
      kpi('Amount due', money(inv.amount_due)),
    );
    if (ctx.isOperator) {
      renderIf(actions, inv.status, () => [
        inv.status === 'draft' ? act('finalize', 'Finalize') : null,
        inv.status === 'final' ? act('pay', 'Mark paid') : null,
        inv.status === 'draft' || inv.status === 'final' ? act('void', 'Void') : null,
      ]);
    }
    // The printable page changes only with the invoice; reload it then, not on every poll.
    const sig = JSON.stringify([inv.status, inv.drafted_at, inv.total, inv.credited, inv.number]);
    if (sig !== shown) {
      html = await apiText(`/v1/invoices/${id}?format=html`);
      frame.srcdoc = html;
      shown = sig;
    }
  }
  return { el, refresh };
}
