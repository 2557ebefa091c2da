import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { buildServer } from '../../scripts/build-server.mjs';
import { HERALD_BIN, freePort, startHerald } from '../helpers/herald-process.js';
import { createTestSchema, scaleoutModeRequested } from '../helpers/databases.js';
import { startPrivateRedis } from '../helpers/private-services.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * deploy/: no container runtime or cluster is reachable here, so this proves what can be proved without them
 * (docs/deployment.md says what was not run): every file parses; every Kubernetes object validates against the
 * Kubernetes schemas (kubernetes-models) and the objects refer to each other correctly; every command, port,
 * environment variable and probe path the files name exists in Herald; the image's default command, as the
 * Dockerfile's ENTRYPOINT, CMD and ENV say, runs as a plain process and answers its HEALTHCHECK.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DEPLOY = join(ROOT, 'deploy');
const BASE = join(DEPLOY, 'kubernetes/base');
/** Where the Dockerfile's runtime stage puts the repository's build outputs (its WORKDIR). */
const IMAGE_WORKDIR = '/app';

type Doc = Record<string, any>;

function yamlDocuments(path: string): Doc[] {
  // merge: the compose files share the Herald services' settings with YAML merge keys (<<), as Compose reads them.
  const documents = parseAllDocuments(readFileSync(path, 'utf8'), { merge: true });
  for (const document of documents) expect(document.errors, `${path}: ${document.errors.join('; ')}`).toEqual([]);
  return documents.map((document) => document.toJS({ maxAliasCount: 100 }) as Doc).filter(Boolean);
}

interface Dockerfile {
  stages: number;
  from: string[];
  workdir: string;
  env: Record<string, string>;
  entrypoint: string[];
  cmd: string[];
  healthcheck: string[];
  user: string;
  volumes: string[];
  expose: string[];
}

/** The final stage's instructions (line continuations joined; JSON-array forms only, as the file uses). */
function parseDockerfile(text: string): Dockerfile {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const from = lines.filter((line) => /^FROM\s/i.test(line)).map((line) => line.split(/\s+/)[1]);
  const last = lines.slice(lines.map((line) => /^FROM\s/i.test(line)).lastIndexOf(true));
  const result: Dockerfile = { stages: from.length, from, workdir: '/', env: {}, entrypoint: [], cmd: [], healthcheck: [], user: 'root', volumes: [], expose: [] };
  for (const line of last) {
    const [instruction, ...rest] = line.split(/\s+/);
    const argument = line.slice(instruction.length).trim();
    switch (instruction.toUpperCase()) {
      case 'WORKDIR': result.workdir = argument; break;
      case 'USER': result.user = argument; break;
      case 'ENTRYPOINT': result.entrypoint = JSON.parse(argument); break;
      case 'CMD': result.cmd = JSON.parse(argument); break;
      case 'VOLUME': result.volumes = JSON.parse(argument); break;
      case 'EXPOSE': result.expose = rest; break;
      case 'ENV':
        for (const pair of argument.split(/\s+/)) {
          const [name, ...value] = pair.split('=');
          result.env[name] = value.join('=');
        }
        break;
      case 'HEALTHCHECK': result.healthcheck = JSON.parse(argument.slice(argument.indexOf('CMD ') + 4)); break;
    }
  }
  return result;
}

/** The environment variables src/config.ts reads (the only reader of process.env). */
function configVariables(): Set<string> {
  const source = readFileSync(join(ROOT, 'src/config.ts'), 'utf8');
  const names = new Set<string>();
  for (const match of source.matchAll(/env\.([A-Z][A-Z0-9_]+)|\(env, '([A-Z][A-Z0-9_]+)'/g)) names.add(match[1] ?? match[2]);
  return names;
}

/** Herald's CLI commands, as `herald --help` lists them. */
function cliCommands(): Set<string> {
  const help = spawnSync(process.execPath, [HERALD_BIN, '--help'], { encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'silent' } });
  expect(help.status, help.stderr).toBe(0);
  const section = help.stdout.slice(help.stdout.indexOf('Commands:'));
  return new Set([...section.matchAll(/^\s{2}(\w[\w-]*)/gm)].map((match) => match[1]));
}

/** A Kubernetes object validated by the kubernetes-models class of its apiVersion and kind. */
async function validateObject(object: Doc): Promise<void> {
  const [group, version] = object.apiVersion.includes('/') ? object.apiVersion.split('/') : ['', object.apiVersion];
  const module = await import(`kubernetes-models/${group ? `${group}/` : ''}${version}/${object.kind}`);
  const Model = module[object.kind] ?? module.default;
  new Model(object).validate();
}

const dockerfile = parseDockerfile(readFileSync(join(DEPLOY, 'Dockerfile'), 'utf8'));
const kustomization = yamlDocuments(join(BASE, 'kustomization.yaml'))[0];
const objects = (kustomization.resources as string[]).flatMap((file) => yamlDocuments(join(BASE, file)));
const embeddedCompose = yamlDocuments(join(DEPLOY, 'docker-compose.yml'))[0];
const scaleoutCompose = yamlDocuments(join(DEPLOY, 'docker-compose.scaleout.yml'))[0];
/** Compose services that run the Herald image (the others are PostgreSQL and Redis). */
const heraldServices = (compose: Doc) =>
  Object.entries(compose.services as Record<string, Doc>).filter(([, service]) => service.image === 'herald:local');
const heraldContainers = () =>
  objects
    .filter((object) => ['Deployment', 'Job'].includes(object.kind))
    .flatMap((object) => object.spec.template.spec.containers as Doc[]);
const byKind = (kind: string) => objects.filter((object) => object.kind === kind);

describe('deployment files', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server?.close());

  it('every YAML file parses, and the kustomize base lists every manifest beside it', () => {
    const files = readdirSync(BASE).filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml');
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    expect(kustomization.kind).toBe('Kustomization');
    expect(objects.length).toBe(files.length);
    expect(Object.keys(embeddedCompose.services)).toEqual(['herald']);
  });

  it('every Kubernetes object validates against the Kubernetes schemas, and a broken one does not', async () => {
    const kinds = objects.map((object) => `${object.apiVersion}/${object.kind}`).sort();
    expect(kinds).toEqual(['apps/v1/Deployment', 'apps/v1/Deployment', 'autoscaling/v2/HorizontalPodAutoscaler', 'batch/v1/Job', 'v1/ConfigMap', 'v1/Secret', 'v1/Service']);
    for (const object of objects) await expect(validateObject(object), `${object.kind} ${object.metadata.name}`).resolves.toBeUndefined();
    // The validator is not a no-op: a port as a string, a Deployment without a selector.
    const api = structuredClone(byKind('Deployment')[0]);
    api.spec.template.spec.containers[0].ports[0].containerPort = 'three thousand';
    await expect(validateObject(api)).rejects.toThrow(/containerPort must be integer/);
    const noSelector = structuredClone(byKind('Deployment')[0]);
    delete noSelector.spec.selector;
    await expect(validateObject(noSelector)).rejects.toThrow(/selector/);
  });

  it('the objects refer to each other: Service → API pods, HPA → API Deployment, envFrom → ConfigMap and Secret', () => {
    const [api, worker] = ['herald-api', 'herald-worker'].map((name) => byKind('Deployment').find((object) => object.metadata.name === name)!);
    expect(api && worker).toBeTruthy();
    for (const deployment of [api, worker]) {
      const labels = deployment.spec.template.metadata.labels;
      for (const [key, value] of Object.entries(deployment.spec.selector.matchLabels)) expect(labels[key]).toBe(value);
    }
    const service = byKind('Service')[0];
    for (const [key, value] of Object.entries(service.spec.selector)) expect(api.spec.template.metadata.labels[key]).toBe(value);
    // The worker's pods are not behind the Service.
    expect(Object.entries(service.spec.selector).every(([key, value]) => worker.spec.template.metadata.labels[key] === value)).toBe(false);
    const apiContainer = api.spec.template.spec.containers[0];
    expect(apiContainer.ports.map((port: Doc) => port.name)).toContain(service.spec.ports[0].targetPort);
    const hpa = byKind('HorizontalPodAutoscaler')[0];
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'herald-api' });
    // HPA CPU utilisation needs CPU requests on the pods it scales.
    expect(apiContainer.resources.requests.cpu).toBeTruthy();
    const configMap = byKind('ConfigMap')[0];
    const secret = byKind('Secret')[0];
    for (const container of heraldContainers()) {
      expect(container.envFrom).toEqual([{ configMapRef: { name: configMap.metadata.name } }, { secretRef: { name: secret.metadata.name } }]);
      expect(container.resources.requests.cpu && container.resources.requests.memory, container.name).toBeTruthy();
      expect(container.image).toBe(kustomization.images[0].name);
    }
    // Every pod runs as the image's non-root user.
    for (const object of [...byKind('Deployment'), ...byKind('Job')]) expect(object.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
  });

  it('every command, environment variable, port and probe path named in deploy/ exists in Herald', () => {
    const commands = cliCommands();
    for (const command of ['start', 'api', 'worker', 'migrate']) expect(commands, command).toContain(command);
    const used: Array<[where: string, command: string]> = [
      ['Dockerfile CMD', dockerfile.cmd[0]],
      ...[...heraldServices(embeddedCompose), ...heraldServices(scaleoutCompose)].map(([name, service]): [string, string] => [`compose ${name}`, service.command[0]]),
      ...heraldContainers().map((container): [string, string] => [`kubernetes ${container.name}`, container.args[0]]),
    ];
    for (const [where, command] of used) expect(commands, `${where}: ${command}`).toContain(command);
    expect(new Set(used.map(([, command]) => command))).toEqual(new Set(['start', 'api', 'worker', 'migrate']));

    const variables = configVariables();
    const named: Array<[where: string, name: string]> = [
      ...Object.keys(dockerfile.env).map((name): [string, string] => ['Dockerfile ENV', name]),
      ...[...heraldServices(embeddedCompose), ...heraldServices(scaleoutCompose)].flatMap(([service, definition]) =>
        Object.keys(definition.environment ?? {}).map((name): [string, string] => [`compose ${service}`, name]),
      ),
      ...Object.keys(byKind('ConfigMap')[0].data).map((name): [string, string] => ['ConfigMap', name]),
      ...Object.keys(byKind('Secret')[0].stringData).map((name): [string, string] => ['Secret', name]),
    ];
    for (const [where, name] of named) expect(variables.has(name), `${where}: ${name} is not read by src/config.ts`).toBe(true);
    // The scale-out processes refuse to start without these (src/main-api.ts); every process needs the same key.
    for (const [, service] of heraldServices(scaleoutCompose)) {
      expect(Object.keys(service.environment)).toEqual(expect.arrayContaining(['DATABASE_URL', 'REDIS_URL', 'HERALD_ENCRYPTION_KEY']));
    }
    expect(Object.keys(byKind('Secret')[0].stringData)).toEqual(expect.arrayContaining(['DATABASE_URL', 'REDIS_URL', 'HERALD_ENCRYPTION_KEY']));

    // Ports: the one Herald listens on (PORT) is the one every file publishes.
    const port = Number(dockerfile.env.PORT);
    expect(dockerfile.expose).toEqual([String(port)]);
    expect(Number(byKind('ConfigMap')[0].data.PORT)).toBe(port);
    for (const container of heraldContainers().filter((container) => container.ports)) expect(container.ports[0].containerPort).toBe(port);
    const published = [...heraldServices(embeddedCompose), ...heraldServices(scaleoutCompose)].flatMap(([, service]) => (service.ports ?? []) as string[]);
    expect(published).toEqual(['3000:3000', '3001:3000', '3002:3000']);
    for (const mapping of published) expect(Number(mapping.split(':')[1])).toBe(port);
    // Listening beyond the container's loopback, in both the image and the cluster.
    expect(dockerfile.env.HOST).toBe('0.0.0.0');
    expect(byKind('ConfigMap')[0].data.HOST).toBe('0.0.0.0');

    // Probe and health-check paths are GET routes of the API.
    const paths = heraldContainers().flatMap((container) => [container.readinessProbe, container.livenessProbe].filter(Boolean).map((probe: Doc) => probe.httpGet.path as string));
    expect(paths.length).toBe(2);
    const healthcheckPath = /\/health[\w/-]*/.exec(dockerfile.healthcheck.join(' '))![0];
    for (const path of [...paths, healthcheckPath]) expect(server.app.hasRoute({ method: 'GET', url: path }), path).toBe(true);
  });

  it('the Dockerfile: multi-stage on node:20-slim, non-root, a data volume, the health check, herald start by default', () => {
    expect(dockerfile.stages).toBeGreaterThanOrEqual(2);
    expect(dockerfile.from.every((image) => image === 'node:20-slim')).toBe(true);
    expect(dockerfile.user).toBe('node');
    expect(dockerfile.volumes).toEqual([dockerfile.env.HERALD_DATA_DIR]);
    expect(dockerfile.cmd).toEqual(['start']);
    expect(dockerfile.entrypoint[0]).toBe('node');
    expect(dockerfile.healthcheck[0]).toBe('node');
    // The runtime stage copies exactly what the build writes and the entry point runs.
    const text = readFileSync(join(DEPLOY, 'Dockerfile'), 'utf8');
    expect(text).toContain('node scripts/build-web.mjs && node scripts/build-server.mjs');
    expect(dockerfile.entrypoint[1]).toBe(`${IMAGE_WORKDIR}/dist/server/cli.js`);
  });

  it("the image's default command runs as a plain process with the Dockerfile's environment and passes its HEALTHCHECK", async () => {
    // What the build stage makes: the compiled server (web/dist is built by the test setup).
    await buildServer({ ifStale: true, quiet: true });
    const dataDir = mkdtempSync(join(tmpdir(), 'herald-image-'));
    const port = await freePort();
    // The Dockerfile's ENV, with the volume at a temporary directory and another port (this machine is shared):
    // what `docker run -v …:/data -e PORT=… herald` would do.
    const env = { ...dockerfile.env, HERALD_DATA_DIR: dataDir, PORT: String(port) };
    const entry = dockerfile.entrypoint[1].replace(IMAGE_WORKDIR, ROOT.replace(/\/$/, ''));
    const herald = await startHerald(env, dockerfile.cmd, { bin: entry });
    try {
      const health = await fetch(`${herald.url}/health`);
      expect(health.status).toBe(200);
      expect((await health.json()).status).toBe('ok');
      // The dashboard is served from the build the image copies.
      expect((await fetch(`${herald.url}/dashboard/`)).status).toBe(200);
      // The embedded data (SQLite, the generated key) is on the volume.
      expect(readdirSync(dataDir)).toEqual(expect.arrayContaining(['encryption.key']));
      // The HEALTHCHECK command itself, as Docker runs it inside the container.
      const check = await new Promise<number | null>((resolve) => {
        const child = spawn(dockerfile.healthcheck[0] === 'node' ? process.execPath : dockerfile.healthcheck[0], dockerfile.healthcheck.slice(1), { env: { ...process.env, ...env }, stdio: 'ignore' });
        child.once('exit', resolve);
      });
      expect(check).toBe(0);
    } finally {
      await herald.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    // And a check against nothing listening fails (the command is not always true).
    const failed = spawnSync(process.execPath, dockerfile.healthcheck.slice(1), { env: { ...process.env, PORT: String(port) } });
    expect(failed.status).toBe(1);
  }, 120_000);

  it.runIf(scaleoutModeRequested())('scale-out: the image runs migrate, api and worker as the scale-out compose file says', async () => {
    await buildServer({ ifStale: true, quiet: true });
    const schema = await createTestSchema();
    const redis = await startPrivateRedis();
    const dataDir = mkdtempSync(join(tmpdir(), 'herald-image-'));
    const entry = dockerfile.entrypoint[1].replace(IMAGE_WORKDIR, ROOT.replace(/\/$/, ''));
    const service = (name: string) => scaleoutCompose.services[name] as Doc;
    // The compose file's environment, pointed at this test's PostgreSQL schema and Redis.
    const env = {
      ...dockerfile.env,
      ...service('api-1').environment,
      DATABASE_URL: schema.url,
      REDIS_URL: redis.url,
      HERALD_ENCRYPTION_KEY: 'ab'.repeat(32),
      HERALD_DATA_DIR: dataDir,
    };
    const processes: Array<{ stop(): Promise<unknown> }> = [];
    try {
      const migrate = spawnSync(process.execPath, [entry, ...service('migrate').command], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
      expect(migrate.status, migrate.stderr).toBe(0);
      for (const name of ['api-1', 'api-2']) {
        const api = await startHerald({ ...env, PORT: String(await freePort()) }, service(name).command, { bin: entry });
        processes.push(api);
        expect((await fetch(`${api.url}/health`)).status).toBe(200);
      }
      const worker = spawn(process.execPath, [entry, ...service('worker').command], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let workerOutput = '';
      worker.stdout!.on('data', (chunk) => (workerOutput += chunk));
      worker.stderr!.on('data', (chunk) => (workerOutput += chunk));
      processes.push({ stop: () => new Promise((resolve) => { if (worker.exitCode !== null) return resolve(undefined); worker.once('exit', resolve); worker.kill('SIGTERM'); }) });
      // Up and consuming, by its own start-up line: alive after a fixed wait said little on a loaded machine, where
      // the worker may not yet have read its configuration or reached Redis and PostgreSQL by then.
      await expect.poll(() => worker.exitCode !== null || workerOutput.includes('Herald worker consuming jobs'), { timeout: 60_000, interval: 50 }).toBe(true);
      expect(worker.exitCode, workerOutput).toBeNull();
      expect(workerOutput).toContain('Herald worker consuming jobs');
    } finally {
      for (const process of processes) await process.stop();
      await redis.close();
      await schema.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
