// The allotd API, authenticated with the signed-in key. Where allotd runs as replicas
// (docs/ha.md), the dashboard calls whichever leads: it asks the replicas' /readyz which one does,
// and follows a failover, retrying what is safe to retry while no replica leads.

const KEY_NAME = 'allot.key';
const SERVERS_NAME = 'allot.servers';
// How long a request keeps looking for a leader: past a lease (10 s by default) and a takeover.
const FAILOVER_MS = 25000;
const READYZ_TIMEOUT_MS = 2000;

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

// The replicas' URLs as "scheme://host[:port]" (a path is kept for an allotd behind a prefix).
// Throws with what is wrong in the list.
export function parseServers(text: string): string[] {
  const servers: string[] = [];
  for (const item of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    let parsed: URL | null = null;
    try {
      if (/^https?:\/\//i.test(item)) parsed = new URL(item);
    } catch {
      // Said below.
    }
    if (!parsed) throw new Error(`not an http or https URL: ${item} (write it as http://host:port)`);
    if (parsed.username || parsed.password || parsed.search || parsed.hash) {
      throw new Error(`a server's URL has no user, query or fragment: ${item}`);
    }
    const url = `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
    if (!servers.includes(url)) servers.push(url);
  }
  return servers;
}

export function storedServers(): string[] {
  try {
    return parseServers(localStorage.getItem(SERVERS_NAME) ?? '');
  } catch {
    return [];
  }
}

export function storeServers(servers: string[]): void {
  if (servers.length) localStorage.setItem(SERVERS_NAME, servers.join(','));
  else localStorage.removeItem(SERVERS_NAME);
}

// The replica the dashboard calls: '' for this page's own server.
let leader = '';
// Replicas named by /readyz answers, beside the stored list.
const learned = new Set<string>();
type ServerHandler = (server: string) => void;
let onLeaderChange: ServerHandler = () => {};
export function setLeaderChangeHandler(handler: ServerHandler): void {
  onLeaderChange = handler;
}

// The URL of the replica in use, for links that leave the API (a shell's WebSocket).
export function serverUrl(): string {
  return leader || location.origin;
}

function useLeader(url: string): void {
  const next = url === location.origin ? '' : url;
  if (next === leader) return;
  leader = next;
  onLeaderChange(serverUrl());
}

// `url` as parseServers writes it; null when it is not one a browser can call.
function serverOf(url: string | null | undefined): string | null {
  try {
    return url ? (parseServers(url)[0] ?? null) : null;
  } catch {
    return null;
  }
}

interface Readiness {
  role?: string;
  leader?: string | null;
  replicas?: string[];
}

async function readiness(server: string): Promise<{ ok: boolean; body: Readiness } | null> {
  try {
    const response = await fetch(`${server}/readyz`, { cache: 'no-store', signal: AbortSignal.timeout(READYZ_TIMEOUT_MS) });
    const body = (await response.json()) as Readiness;
    for (const url of body.replicas ?? []) {
      const known = serverOf(url);
      if (known) learned.add(known);
    }
    return { ok: response.ok, body };
  } catch {
    return null;
  }
}

// Asks the known replicas which one leads; true once one says it does.
async function findLeader(): Promise<boolean> {
  const candidates = [...new Set([serverUrl(), location.origin, ...storedServers(), ...learned])];
  for (const server of candidates) {
    const answer = await readiness(server);
    if (!answer) continue;
    if (answer.ok) {
      useLeader(server);
      return true;
    }
    const named = serverOf(answer.body.leader);
    if (named && !candidates.includes(named) && (await readiness(named))?.ok) {
      useLeader(named);
      return true;
    }
  }
  return false;
}

// Learns the replicas' URLs from the server in use, so that a dashboard nobody gave a list to
// still follows a failover.
export async function learnReplicas(): Promise<void> {
  await readiness(serverUrl());
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
  // Names this write for good (POST /v1/instances): sent again after a lost answer, it is not
  // done twice.
  idempotencyKey?: string;
}

// A fresh Idempotency-Key (crypto.randomUUID needs a secure context; this does not).
export function newIdempotencyKey(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `${prefix}-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// One try at the replica in use: its answer, 'moved' when that replica does not lead (nothing
// was done), or 'unreachable' (the request may or may not have been done).
async function attempt(path: string, options: RequestOptions, key: string | null): Promise<Response | 'moved' | 'unreachable'> {
  const headers: Record<string, string> = {};
  if (key) headers['Authorization'] = `Bearer ${key}`;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  if (options.idempotencyKey) headers['Idempotency-Key'] = options.idempotencyKey;
  try {
    const response = await fetch(`${leader}${path}`, {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      cache: 'no-store',
      // A follower's 307 is not followed: the browser would drop the key on the way to another
      // origin. The leader is asked for instead.
      redirect: 'manual',
    });
    if (response.type === 'opaqueredirect') return 'moved';
    if (response.status === 503 && response.headers.get('Content-Type')?.includes('json')) {
      const parsed = (await response.clone().json().catch(() => ({}))) as { error?: { code?: string } };
      if (parsed.error?.code === 'not_leader') return 'moved';
    }
    return response;
  } catch {
    return 'unreachable';
  }
}

async function send(path: string, options: RequestOptions): Promise<Response> {
  const key = options.key ?? storedKey();
  const method = options.method ?? 'GET';
  // Sent again after a lost answer only when doing it twice is the same as once.
  const repeatable = ['GET', 'HEAD', 'PUT', 'DELETE'].includes(method) || !!options.idempotencyKey;
  const deadline = Date.now() + FAILOVER_MS;
  let wait = 250;
  let response: Response;
  for (;;) {
    const outcome = await attempt(path, options, key);
    const retry = outcome === 'moved' || (repeatable && (outcome === 'unreachable' || [502, 503, 504].includes((outcome as Response).status)));
    if (!retry || Date.now() >= deadline) {
      if (outcome === 'unreachable') {
        // The next request goes to the leader, if another replica leads now.
        if (!repeatable) await findLeader();
        throw new ApiError(0, 'unreachable', `cannot reach allotd at ${serverUrl()}${repeatable ? '' : ': it may or may not have done this; look before you retry'}`);
      }
      if (outcome === 'moved') throw new ApiError(503, 'not_leader', 'no allotd replica leads at the moment; retry in a few seconds');
      response = outcome;
      break;
    }
    if (!(await findLeader())) await sleep(wait);
    wait = Math.min(wait * 2, 2000);
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
