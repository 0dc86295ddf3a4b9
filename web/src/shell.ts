// A browser shell into a running instance: xterm.js over a WebSocket to allotd, which carries the
// session's frames (docs/api.md, "Exec and shell") to the instance's node. The WebSocket is opened
// with a short-lived ticket, since a browser cannot send the key with it.
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { api, serverUrl } from './api';

const COLS = 120;
const ROWS = 30;
const HEADER = 5;

const encoder = new TextEncoder();

function frame(kind: string, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(HEADER + payload.length);
  out[0] = kind.charCodeAt(0);
  new DataView(out.buffer).setUint32(1, payload.length);
  out.set(payload, HEADER);
  return out;
}

export interface ShellView {
  el: HTMLElement;
  close: () => void;
}

// Opens a shell in `parent`; `onEnd` gets the exit (or why it broke off).
export async function openShell(instanceId: string, parent: HTMLElement, onEnd: (text: string) => void): Promise<ShellView> {
  const ticket = await api<{ path: string }>(`/v1/instances/${instanceId}/shell-ticket`, { method: 'POST', body: {} });
  const term = new Terminal({ cols: COLS, rows: ROWS, convertEol: false, cursorBlink: true, fontSize: 13 });
  term.open(parent);
  // The replica that issued the ticket, which may not be the one that served this page.
  const socket = new WebSocket(`${serverUrl().replace(/^http/, 'ws')}${ticket.path}&cols=${COLS}&rows=${ROWS}`);
  socket.binaryType = 'arraybuffer';
  let pending = new Uint8Array(0);
  let ended = false;
  socket.onmessage = (event) => {
    const data = new Uint8Array(event.data as ArrayBuffer);
    const joined = new Uint8Array(pending.length + data.length);
    joined.set(pending);
    joined.set(data, pending.length);
    let at = 0;
    while (joined.length - at >= HEADER) {
      const size = new DataView(joined.buffer, at + 1, 4).getUint32(0);
      if (joined.length - at - HEADER < size) break;
      const kind = String.fromCharCode(joined[at]);
      const payload = joined.subarray(at + HEADER, at + HEADER + size);
      if (kind === 'o' || kind === 'e') term.write(payload);
      if (kind === 'x') {
        ended = true;
        onEnd(`exited with ${new TextDecoder().decode(payload)}`);
      }
      at += HEADER + size;
    }
    pending = joined.slice(at);
  };
  socket.onclose = () => {
    if (!ended) onEnd('the session closed');
  };
  term.onData((text) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(frame('i', encoder.encode(text)));
  });
  socket.onopen = () => term.focus();
  return {
    el: parent,
    close: () => {
      socket.close();
      term.dispose();
    },
  };
}
