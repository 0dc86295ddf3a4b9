// Money comes from the API as decimal strings of at most six places (micro-units). It is added
// and rounded here as whole micro-units (BigInt), never as floating point.
const MICROS = 1_000_000n;

export function toMicros(value: string): bigint | null {
  const m = /^(-)?(\d+)(?:\.(\d{1,6}))?$/.exec(value.trim());
  if (!m) return null;
  const micros = BigInt(m[2]) * MICROS + BigInt((m[3] ?? '').padEnd(6, '0'));
  return m[1] ? -micros : micros;
}

export function fromMicros(micros: bigint): string {
  const abs = micros < 0n ? -micros : micros;
  return `${micros < 0n ? '-' : ''}${abs / MICROS}.${(abs % MICROS).toString().padStart(6, '0')}`;
}

// The exact sum of money strings; one that is not money counts as zero.
export function addMoney(...values: (string | null | undefined)[]): string {
  return fromMicros(values.reduce((sum, v) => sum + (v ? (toMicros(v) ?? 0n) : 0n), 0n));
}

// A money string rounded half away from zero to `digits` places, with thousands separators.
export function money(value: string | null | undefined, digits = 2): string {
  if (value === null || value === undefined || value === '') return '–';
  const micros = toMicros(value);
  if (micros === null) return value;
  const abs = micros < 0n ? -micros : micros;
  // Small amounts (a few seconds of GPU time) keep their significant digits instead of 0.00.
  if (abs !== 0n && abs < 10n ** BigInt(6 - digits)) digits = 6;
  const unit = 10n ** BigInt(6 - digits);
  const rounded = (abs + unit / 2n) / unit;
  const scale = 10n ** BigInt(digits);
  const whole = (rounded / scale).toLocaleString('en-US');
  const fraction = digits > 0 ? `.${(rounded % scale).toString().padStart(digits, '0')}` : '';
  return `${micros < 0n && rounded !== 0n ? '-' : ''}${whole}${fraction}`;
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
