import { defineConfig } from 'vite';

// allotd serves web/dist itself (--web-dir); during development `npm run dev` proxies the API
// to a running allotd (ALLOT_SERVER, default http://127.0.0.1:8080).
declare const process: { env: Record<string, string | undefined> };
const target = process.env.ALLOT_SERVER ?? 'http://127.0.0.1:8080';

export default defineConfig({
  base: './',
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 600 },
  server: { proxy: { '/v1': target } },
  preview: { proxy: { '/v1': target } },
});
