import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

/** The dashboard, served by Herald at /dashboard (src/http/dashboard.ts) from web/dist. */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Plain HTTP on any host is a target: no modulepreload polyfill fetches, nothing needing a secure context.
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: true,
    // The lazily loaded <Inbox /> preview (@novu/react) is one ~520 KB chunk on purpose; the main bundle is far below.
    chunkSizeWarningLimit: 600,
  },
  logLevel: 'warn',
});
