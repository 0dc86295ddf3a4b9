import type { Ctx } from './context';
import { errorText, h, type Child } from './dom';

// Runs what the user asked for; a refusal from the API shows as a toast, never as an
// uncaught promise.
export async function attempt(ctx: Ctx, action: () => Promise<void>): Promise<boolean> {
  try {
    await action();
    return true;
  } catch (err) {
    ctx.toast(errorText(err), 'error');
    return false;
  }
}

// A one-line form whose submit runs the action instead of navigating.
export function actionForm(ctx: Ctx, action: () => Promise<void>, ...children: Child[]): HTMLFormElement {
  return h(
    'form',
    {
      class: 'inline-form',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        await attempt(ctx, action);
      },
    },
    ...children,
  );
}
