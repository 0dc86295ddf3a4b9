// A tiny DOM builder: every text goes in as a text node, so nothing from the API is parsed as HTML.

export type Child = Node | string | number | null | undefined | false | Child[];
export type Attrs = Record<string, unknown>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [name, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (name.startsWith('on') && typeof value === 'function') {
        el.addEventListener(name.slice(2).toLowerCase(), value as EventListener);
      } else if (name === 'class') {
        el.className = String(value);
      } else if (name === 'style' && typeof value === 'object') {
        Object.assign(el.style, value);
      } else if (name === 'value' && 'value' in el) {
        (el as unknown as { value: string }).value = String(value);
      } else if (name === 'checked' && el instanceof HTMLInputElement) {
        el.checked = Boolean(value);
      } else {
        el.setAttribute(name, value === true ? '' : String(value));
      }
    }
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else if (child instanceof Node) parent.appendChild(child);
    else parent.appendChild(document.createTextNode(String(child)));
  }
}

export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

// Replaces the content only when what it is built from changed, so that polling does not
// rebuild (and flicker) a table whose data is the same.
export function renderIf(parent: HTMLElement, data: unknown, build: () => Child): void {
  const signature = JSON.stringify(data);
  if (parent.dataset.sig === signature) return;
  parent.dataset.sig = signature;
  replace(parent, build());
}

export interface Column<T> {
  title: string;
  cell: (row: T) => Child;
  class?: string;
}

export interface TableOptions<T> {
  empty?: string;
  rowAttrs?: (row: T) => Attrs;
  testid?: string;
}

export function table<T>(rows: T[], columns: Column<T>[], options: TableOptions<T> = {}): HTMLElement {
  if (!rows.length) return h('div', { class: 'empty' }, options.empty ?? 'Nothing here yet.');
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { 'data-testid': options.testid },
      h('thead', null, h('tr', null, columns.map((c) => h('th', { class: c.class }, c.title)))),
      h(
        'tbody',
        null,
        rows.map((row) =>
          h('tr', options.rowAttrs?.(row) ?? null, columns.map((c) => h('td', { class: c.class }, c.cell(row)))),
        ),
      ),
    ),
  );
}

// Shows `rows` as a table in `parent`, unless those rows are already shown there.
export function renderTable<T>(parent: HTMLElement, rows: T[], columns: Column<T>[], options: TableOptions<T> = {}): void {
  renderIf(parent, rows, () => table(rows, columns, options));
}

export function card(title: Child, ...body: Child[]): HTMLElement {
  return h('section', { class: 'card' }, title ? h('h2', null, title) : null, ...body);
}

// A page: its title, with `aside` (a toolbar, a line of context) beside it, over its body.
export function page(title: Child, aside: Child, ...body: Child[]): HTMLElement {
  return h('div', { class: 'page' }, h('div', { class: 'page-head' }, h('h1', null, title), aside), ...body);
}

export function toolbar(...children: Child[]): HTMLElement {
  return h('div', { class: 'toolbar' }, ...children);
}

export function kpi(label: string, value: Child, sub?: Child, testid?: string): HTMLElement {
  return h(
    'div',
    { class: 'kpi', 'data-testid': testid },
    h('div', { class: 'kpi-label' }, label),
    h('div', { class: 'kpi-value' }, value),
    sub ? h('div', { class: 'kpi-sub' }, sub) : null,
  );
}

export function badge(text: string, kind = text): HTMLElement {
  return h('span', { class: `badge badge-${kind.replace(/[^a-z0-9_-]/gi, '')}` }, text);
}

export function link(href: string, ...children: Child[]): HTMLAnchorElement {
  return h('a', { href }, ...children);
}

export function errorBox(error: unknown): HTMLElement {
  return h('div', { class: 'error', role: 'alert', 'data-testid': 'error' }, errorText(error));
}

export function errorText(error: unknown): string {
  if (error && typeof error === 'object' && 'code' in error && 'message' in error) {
    const e = error as { code: string; message: string; status?: number };
    return `${e.code}: ${e.message}${e.status ? ` (HTTP ${e.status})` : ''}`;
  }
  return String(error);
}
