export const SERVER_BUILD_DIR: string;
export const SERVER_ENTRY: string;
export const BUILD_INFO: string;
export function sourceFingerprint(root?: string): string[];
export function freshServerBuild(root?: string): string | undefined;
export function serverBuildIsStale(root?: string): boolean;
export function buildServer(options?: { ifStale?: boolean; root?: string; quiet?: boolean }): Promise<boolean>;
