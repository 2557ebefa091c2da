import { useEffect } from 'react';
import { Inbox, InboxContent } from '@novu/react';

export interface InboxPreviewSettings {
  applicationIdentifier: string;
  subscriberId: string;
  subscriberHash?: string;
}

/**
 * Names for the Inbox's icon-only buttons. @novu/react 3.19.2 shows their names only as hover tooltips, so screen
 * readers (and axe-core's `button-name` rule) find nameless buttons; the dashboard names them after Novu's own tooltips.
 */
const BUTTON_NAMES: Record<string, string> = {
  'nv-notificationRead__button': 'Mark as read',
  'nv-notificationUnread__button': 'Mark as unread',
  'nv-notificationArchive__button': 'Archive',
  'nv-notificationUnarchive__button': 'Unarchive',
  'nv-notificationSnooze__button': 'Snooze',
  'nv-notificationUnsnooze__button': 'Unsnooze',
  'nv-preferences__button': 'Preferences',
  'nv-preferencesHeader__back__button': 'Back to notifications',
  'nv-moreActions__dropdownTrigger': 'More actions',
  'nv-moreTabs__button': 'More tabs',
  'nv-inboxStatus__dropdownTrigger': 'Filter notifications',
};

/** A button of the Inbox with no text and no name gets one: from the table, else from its Novu element key. */
function nameButtons(root: ParentNode) {
  for (const button of root.querySelectorAll<HTMLElement>('button[class*="nv-"]:not([aria-label])')) {
    if (button.textContent?.trim()) continue;
    const novuClass = [...button.classList].find((name) => name.startsWith('nv-'));
    if (!novuClass) continue;
    const fallback = novuClass.slice(3).replace(/__.*$/, '').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
    button.setAttribute('aria-label', BUTTON_NAMES[novuClass] ?? fallback);
  }
}

/**
 * Novu's real `<Inbox />` (@novu/react) pointed at this Herald: the dashboard's own origin serves the Inbox routes
 * and the socket. Loaded with a dynamic import (SubscriberPage), so @novu/react stays out of the main bundle.
 * Relative redirect URLs of notifications are ignored: the default would push them into the dashboard's history.
 */
export default function InboxPreview({ applicationIdentifier, subscriberId, subscriberHash }: InboxPreviewSettings) {
  const origin = window.location.origin;
  useEffect(() => {
    // The Inbox renders (and re-renders) its buttons on its own, some in popovers outside the frame.
    const observer = new MutationObserver(() => nameButtons(document.body));
    observer.observe(document.body, { childList: true, subtree: true });
    nameButtons(document.body);
    return () => observer.disconnect();
  }, []);
  return (
    <div className="inbox-preview">
      <Inbox
        applicationIdentifier={applicationIdentifier}
        subscriber={subscriberId}
        subscriberHash={subscriberHash}
        backendUrl={origin}
        socketUrl={origin}
        routerPush={() => undefined}
        // Novu's date text is too faint on white (WCAG AA): the dashboard's muted colour instead.
        appearance={{ elements: { notificationDate: { color: '#57606a' } } }}
      >
        <InboxContent />
      </Inbox>
    </div>
  );
}
