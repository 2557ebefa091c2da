import { Type, type Static } from '@sinclair/typebox';
import { CHANNEL_SETTINGS_PROVIDER_IDS } from '../../usecases/subscriber-credentials/channel-settings.js';

/** A plain `enum` so a bad value reads "providerId must be one of the following values: ...". */
const ChatOrPushProviderId = Type.Unsafe<string>({
  type: 'string',
  enum: [...CHANNEL_SETTINGS_PROVIDER_IDS],
  description: 'a chat or push provider id',
});

/**
 * The spec's ChannelCredentials as a request body. Unknown fields are dropped (additionalProperties false
 * with the app's removeAdditional), so a stored entry only ever holds these.
 */
export const ChannelCredentialsBody = Type.Object(
  {
    webhookUrl: Type.Optional(Type.String({ description: 'http or https URL; used by chat integrations' })),
    channel: Type.Optional(Type.String({ description: 'channel specification for one chat provider' })),
    deviceTokens: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'push device tokens; may be empty' })),
    alertUid: Type.Optional(Type.String()),
    title: Type.Optional(Type.String()),
    imageUrl: Type.Optional(Type.String()),
    state: Type.Optional(Type.String()),
    externalUrl: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** Novu's UpdateSubscriberChannelRequestDto, the body of both PUT and PATCH. */
export const SubscriberChannelBody = Type.Object({
  providerId: ChatOrPushProviderId,
  integrationIdentifier: Type.Optional(Type.String({ minLength: 1, description: 'an integration of the caller environment for this provider' })),
  credentials: ChannelCredentialsBody,
});
export type SubscriberChannelBody = Static<typeof SubscriberChannelBody>;

export const SubscriberCredentialsParams = Type.Object({ subscriberId: Type.String() });

/** The providerId is checked by the use-case so a bad one is a 400 in the one error form. */
export const SubscriberProviderCredentialsParams = Type.Object({ subscriberId: Type.String(), providerId: Type.String() });

export const NoContent = Type.Null({ description: 'No content' });
