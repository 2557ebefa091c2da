import type { FastifyReply, FastifyRequest } from 'fastify';

/** The dashboard's session cookie (README, "Dashboard: users and sessions"). */
export const SESSION_COOKIE = 'herald_session';

/*
 * This file is the only reader and writer of cookies. @fastify/cookie is registered with `hook: false` (app.ts): it
 * would otherwise parse the Cookie header in one hook and look for cookies to send in another on every request, while
 * only requests without an Authorization header, outside the Inbox, can be signed in by cookie. Without its hooks,
 * `reply.setCookie` would never send its cookie, so the Set-Cookie header is written here.
 */

/** The session cookie's value, parsed from this request's Cookie header (only when the auth hook needs it). */
export function sessionCookieOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  return header ? request.server.parseCookie(header)[SESSION_COOKIE] : undefined;
}

/**
 * HttpOnly (scripts cannot read it), SameSite=Strict (never sent by another site's request), Path=/ (the
 * dashboard calls the REST API under /v1 and /v2). Secure only when this request came over HTTPS: a Secure cookie
 * is dropped by browsers over plain HTTP, and the dashboard must work on http://<any host or IP>.
 */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, sessionToken: string, expiresAt: string): void {
  void reply.header(
    'set-cookie',
    reply.server.serializeCookie(SESSION_COOKIE, sessionToken, {
      httpOnly: true,
      sameSite: 'strict',
      path: '/',
      secure: request.protocol === 'https',
      expires: new Date(expiresAt),
    }),
  );
}

/** An empty value that expired at the epoch: the browser drops the cookie. */
export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  void reply.header(
    'set-cookie',
    reply.server.serializeCookie(SESSION_COOKIE, '', {
      httpOnly: true,
      sameSite: 'strict',
      path: '/',
      secure: request.protocol === 'https',
      expires: new Date(0),
      maxAge: 0,
    }),
  );
}
