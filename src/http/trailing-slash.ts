/**
 * Novu's API (Express, non-strict routing) answers `/v1/messages/` as `/v1/messages`; Fastify's router would answer a
 * 404. Only the versioned API's paths are rewritten: the dashboard tells `/dashboard` (a redirect) from `/dashboard/`
 * (its page), and Fastify's own `ignoreTrailingSlash` would make those two routes collide.
 */
export function withoutApiTrailingSlash(url: string): string {
  const queryAt = url.indexOf('?');
  const pathEnd = queryAt === -1 ? url.length : queryAt;
  // The shortest path this applies to is `/v1/x/`; `/v1/` itself is left alone (there is no such route).
  if (pathEnd < 6 || url.charCodeAt(pathEnd - 1) !== 47 /* / */ || !/^\/v\d\//i.test(url)) return url;
  return url.slice(0, pathEnd - 1) + url.slice(pathEnd);
}
