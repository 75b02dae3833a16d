import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The operations dashboard, built by `npm install` (the prepare script) into dist-dashboard/ and
// served by the platform at /dashboard. Everything it loads comes from this server.
export default defineConfig({
  root: __dirname,
  base: '/dashboard/',
  plugins: [react()],
  build: { outDir: '../dist-dashboard', emptyOutDir: true, chunkSizeWarningLimit: 2000 },
});
