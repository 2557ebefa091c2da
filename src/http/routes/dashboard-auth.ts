import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';
import { completeSetup } from '../../usecases/dashboard/complete-setup.js';
import { getDashboardProfile } from '../../usecases/dashboard/get-dashboard-profile.js';
import { getSetupStatus } from '../../usecases/dashboard/get-setup-status.js';
import { signIn } from '../../usecases/dashboard/sign-in.js';
import { signOut } from '../../usecases/dashboard/sign-out.js';
import { dashboardSessionOf } from '../auth.js';
import { commonErrorResponses, DataEnvelope } from '../schemas/common.js';
import { EnvironmentHeaders, LoginBody, Profile, SessionStarted, SetupBody, SetupStatus } from '../schemas/dashboard.js';
import { clearSessionCookie, setSessionCookie } from '../session-cookie.js';

const tags = ['Dashboard'];
const cookieNote = 'Sets the `herald_session` cookie (HttpOnly, SameSite=Strict; Secure over HTTPS).';

/** Sign-in and the first-start setup: the dashboard's public routes, plus sign-out and who-am-I. */
export const dashboardAuthRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/v1/dashboard/setup',
    {
      config: { public: true },
      schema: { tags, summary: 'Whether the first admin still has to be created', response: { 200: DataEnvelope(SetupStatus), ...commonErrorResponses } },
    },
    async () => ({ data: await getSetupStatus(deps) }),
  );

  app.post(
    '/v1/dashboard/setup',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Create the first admin with the one-time setup link printed at the first start',
        description: `The token works once and only while no user exists. ${cookieNote}`,
        body: SetupBody,
        response: { 201: DataEnvelope(SessionStarted), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const started = await completeSetup(deps, request.body);
      setSessionCookie(request, reply, started.sessionToken, started.expiresAt);
      return reply.status(201).send({ data: { user: started.user, csrfToken: started.csrfToken } });
    },
  );

  app.post(
    '/v1/dashboard/login',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Sign in with email and password',
        description: `A wrong password and an unknown email get the same 401. Attempts are limited per email and per client IP (429). ${cookieNote}`,
        body: LoginBody,
        response: { 200: DataEnvelope(SessionStarted), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const started = await signIn(deps, { ...request.body, ip: request.ip });
      setSessionCookie(request, reply, started.sessionToken, started.expiresAt);
      return { data: { user: started.user, csrfToken: started.csrfToken } };
    },
  );

  app.post(
    '/v1/dashboard/logout',
    {
      config: { dashboardOnly: true, viewerAllowed: true },
      schema: {
        tags,
        summary: 'Sign out: ends the session on the server and clears the cookie',
        headers: EnvironmentHeaders,
        response: { 200: DataEnvelope(Type.Object({ acknowledged: Type.Boolean() })), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const data = await signOut(deps, { sessionToken: dashboardSessionOf(request).sessionToken });
      clearSessionCookie(request, reply);
      return { data };
    },
  );

  app.get(
    '/v1/dashboard/me',
    {
      config: { dashboardOnly: true },
      schema: {
        tags,
        summary: 'The signed-in user, their organization and its environments, and the CSRF token',
        headers: EnvironmentHeaders,
        response: { 200: DataEnvelope(Profile), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await getDashboardProfile(deps, dashboardSessionOf(request)) }),
  );
};
