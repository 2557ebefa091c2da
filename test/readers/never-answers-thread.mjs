// A reader thread that starts, then hangs (test/readers/hung-reader-thread.test.ts): the first message it gets, a page or 'stop',
// sends it into a loop that never returns, as a thread stuck in a bad page would be.
import { parentPort } from 'node:worker_threads';

parentPort.postMessage('ready');
parentPort.on('message', () => {
  for (;;) {
    // spin
  }
});
