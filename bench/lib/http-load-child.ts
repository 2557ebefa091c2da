import { runHttpLoad, type HttpLoadOptions } from './http-load.js';

/**
 * runHttpLoad in a process of its own (argv[2]: the options as JSON; the result is printed as JSON), so the process
 * under test can count its own CPU time with process.cpuUsage() without the load generator's.
 */
const options = JSON.parse(process.argv[2] ?? '{}') as HttpLoadOptions;
const result = await runHttpLoad(options);
process.stdout.write(JSON.stringify(result));
