export function money(value: string | number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || value === '') return '–';
  const n = Number(value);
  if (!Number.isFinite(n)) return String(value);
  // Small amounts (a few seconds of GPU time) keep their significant digits instead of 0.00.
  if (n !== 0 && Math.abs(n) < 10 ** -digits) digits = 6;
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function rate(value: string | null | undefined): string {
  if (value === null || value === undefined) return '–';
  const n = Number(value);
  return Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 }) : value;
}

export function num(value: string | number | null | undefined, digits = 1): string {
  if (value === null || value === undefined || value === '') return '–';
  const n = Number(value);
  return Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits }) : String(value);
}

export function pct(fraction: string | number | null | undefined, digits = 1): string {
  if (fraction === null || fraction === undefined) return '–';
  const n = Number(fraction);
  return Number.isFinite(n) ? `${(n * 100).toFixed(digits)} %` : String(fraction);
}

export function bytes(n: number): string {
  const gib = n / 1024 ** 3;
  return gib >= 1 ? `${gib.toFixed(1)} GiB` : `${(n / 1024 ** 2).toFixed(0)} MiB`;
}

export function time(iso: string | null | undefined): string {
  if (!iso) return '–';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '–';
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return iso;
  return `${duration(now - t)} ago`;
}

export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  const hr = Math.floor(m / 60);
  if (hr < 48) return `${hr} h ${m % 60} min`;
  return `${Math.floor(hr / 24)} d ${hr % 24} h`;
}

export function thisMonth(): string {
  return new Date().toISOString().slice(0, 7);
}

export function shortId(id: string): string {
  return id.length > 12 ? `${id.slice(0, 4)}${id.slice(4, 12)}…` : id;
}

export function gpuRequest(spec: { gpus: number; gpu_milli: number; nodes: number }): string {
  const per = spec.gpu_milli ? `${spec.gpu_milli / 1000} GPU` : `${spec.gpus} GPU${spec.gpus === 1 ? '' : 's'}`;
  return spec.nodes > 1 ? `${spec.nodes} × ${per}` : per;
}
