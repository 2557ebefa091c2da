import type { FastifyReply, FastifyRequest } from 'fastify';

/** The dashboard's session cookie (README, "Dashboard: users and sessions"). */
export const SESSION_COOKIE = 'herald_session';

/**
 * HttpOnly (scripts cannot read it), SameSite=Strict (never sent by another site's request), Path=/ (the
 * dashboard calls the REST API under /v1 and /v2). Secure only when this request came over HTTPS: a Secure cookie
 * is dropped by browsers over plain HTTP, and the dashboard must work on http://<any host or IP>.
 */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, sessionToken: string, expiresAt: string): void {
  void reply.setCookie(SESSION_COOKIE, sessionToken, {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure: request.protocol === 'https',
    expires: new Date(expiresAt),
  });
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  void reply.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', path: '/', secure: request.protocol === 'https' });
}
