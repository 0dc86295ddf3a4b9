import type { Project, Tenant, WhoAmI } from './types';
import { shortId } from './format';

export interface Ctx {
  me: WhoAmI;
  isOperator: boolean;
  canAdmin: boolean;
  canLaunch: boolean;
  tenants: Map<string, Tenant>;
  projects: Map<string, Project>;
  tenantName(id: string): string;
  projectName(id: string): string;
  toast(message: string, kind?: 'ok' | 'error'): void;
}

export interface PageView {
  el: HTMLElement;
  refresh(): Promise<void>;
  destroy?(): void;
}

export type PageFactory = (ctx: Ctx, params: string[]) => PageView;

export function makeCtx(me: WhoAmI, toast: Ctx['toast']): Ctx {
  const role = me.user.role;
  const ctx: Ctx = {
    me,
    isOperator: role === 'operator-admin',
    canAdmin: role === 'operator-admin' || role === 'tenant-admin',
    canLaunch: role !== 'viewer',
    tenants: new Map([[me.tenant.id, me.tenant]]),
    projects: new Map(),
    tenantName: (id) => ctx.tenants.get(id)?.name ?? shortId(id),
    projectName: (id) => ctx.projects.get(id)?.name ?? shortId(id),
    toast,
  };
  return ctx;
}
