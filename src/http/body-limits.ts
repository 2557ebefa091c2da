/**
 * Novu's API reads bodies of up to 20 MB on the routes that carry workflow definitions and trigger payloads (its
 * bootstrap's `extendedBodySizeRoutes`) and 100 KB elsewhere. A bulk trigger of 100 events, or a `novu sync` of a large
 * framework app, passes 1 MB easily; code that works against Novu must not get a 413 here. Those route families get
 * `HERALD_LARGE_BODY_LIMIT_BYTES`, every other route `HERALD_BODY_LIMIT_BYTES`.
 */
const LARGE_BODY_ROUTE_PREFIXES = ['/v1/events', '/v1/notification-templates', '/v1/workflows', '/v1/layouts', '/v1/bridge/sync', '/v1/bridge/diff'];

/** Whether a route's path is one of those families: the prefix itself or a path below it (Express's `app.use(path)`). */
export function takesLargeBody(routePath: string): boolean {
  return LARGE_BODY_ROUTE_PREFIXES.some(
    (prefix) => routePath.startsWith(prefix) && (routePath.length === prefix.length || routePath.charCodeAt(prefix.length) === 47 /* / */),
  );
}

/** The body limit of a route: the larger one for those families (never below the general limit), else none (the app's). */
export function routeBodyLimit(routePath: string, limits: { bodyLimitBytes: number; largeBodyLimitBytes: number }): number | undefined {
  return takesLargeBody(routePath) ? Math.max(limits.bodyLimitBytes, limits.largeBodyLimitBytes) : undefined;
}
