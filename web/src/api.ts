// The allotd API, same origin, authenticated with the signed-in key.

const KEY_NAME = 'allot.key';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
  override toString(): string {
    return `${this.code}: ${this.message}${this.status ? ` (HTTP ${this.status})` : ''}`;
  }
}

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_NAME) ?? localStorage.getItem(KEY_NAME);
}

export function storeKey(key: string, remember: boolean): void {
  forgetKey();
  (remember ? localStorage : sessionStorage).setItem(KEY_NAME, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY_NAME);
  localStorage.removeItem(KEY_NAME);
}

type Handler = (error: ApiError) => void;
let onUnauthenticated: Handler = () => {};
export function setUnauthenticatedHandler(handler: Handler): void {
  onUnauthenticated = handler;
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  key?: string;
  accept?: 'json' | 'text';
}

async function send(path: string, options: RequestOptions): Promise<Response> {
  const key = options.key ?? storedKey();
  const headers: Record<string, string> = {};
  if (key) headers['Authorization'] = `Bearer ${key}`;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      cache: 'no-store',
    });
  } catch (e) {
    throw new ApiError(0, 'unreachable', `cannot reach allotd (${(e as Error).message})`);
  }
  if (!response.ok) {
    let code = `http_${response.status}`;
    let message = response.statusText || 'request failed';
    try {
      const parsed = (await response.json()) as { error?: { code?: string; message?: string } };
      if (parsed.error) {
        code = parsed.error.code ?? code;
        message = parsed.error.message ?? message;
      }
    } catch {
      // Not JSON: keep the status line.
    }
    const error = new ApiError(response.status, code, message);
    if (response.status === 401 && options.key === undefined) onUnauthenticated(error);
    throw error;
  }
  return response;
}

export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const response = await send(path, options);
  return (await response.json()) as T;
}

export async function apiText(path: string, options: RequestOptions = {}): Promise<string> {
  const response = await send(path, options);
  return response.text();
}

export interface Page<T> {
  items: T[];
  next_after: string | null;
}

// Every item of a paged list (up to `max`).
export async function listAll<T>(path: string, max = 5000): Promise<T[]> {
  const items: T[] = [];
  let after: string | null = null;
  const sep = path.includes('?') ? '&' : '?';
  do {
    const page: Page<T> = await api<Page<T>>(
      `${path}${sep}limit=1000${after ? `&after=${encodeURIComponent(after)}` : ''}`,
    );
    items.push(...page.items);
    after = page.next_after;
  } while (after && items.length < max);
  return items;
}

export function qs(params: Record<string, string | number | boolean | undefined | null>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}
