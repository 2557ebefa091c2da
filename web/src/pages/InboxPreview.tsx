import { Inbox, InboxContent } from '@novu/react';

export interface InboxPreviewSettings {
  applicationIdentifier: string;
  subscriberId: string;
  subscriberHash?: string;
}

/**
 * Novu's real `<Inbox />` (@novu/react) pointed at this Herald: the dashboard's own origin serves the Inbox routes
 * and the socket. Loaded with a dynamic import (SubscriberPage), so its ~100 KB stay out of the main bundle.
 * Relative redirect URLs of notifications are ignored: the default would push them into the dashboard's history.
 */
export default function InboxPreview({ applicationIdentifier, subscriberId, subscriberHash }: InboxPreviewSettings) {
  const origin = window.location.origin;
  return (
    <div className="inbox-preview">
      <Inbox
        applicationIdentifier={applicationIdentifier}
        subscriber={subscriberId}
        subscriberHash={subscriberHash}
        backendUrl={origin}
        socketUrl={origin}
        routerPush={() => undefined}
      >
        <InboxContent />
      </Inbox>
    </div>
  );
}
