// The page the legacy widget's browser test serves from its own origin: Novu's real <NovuProvider> +
// <PopoverNotificationCenter> from @novu/notification-center 2.0.0, on React 18, pointed at Herald (only the backend
// and socket URLs change). Settings come from window.HERALD_WIDGET, written into the page by the test's static server.
import React from 'react';
import { createRoot } from 'react-dom/client';
import { NovuProvider, PopoverNotificationCenter, NotificationBell } from '@novu/notification-center';

const settings = window.HERALD_WIDGET;
// Clicked notifications are recorded: the test reads them back.
window.HERALD_CLICKS = [];

function App() {
  return (
    <NovuProvider
      applicationIdentifier={settings.applicationIdentifier}
      subscriberId={settings.subscriberId}
      subscriberHash={settings.subscriberHash}
      backendUrl={settings.backendUrl}
      socketUrl={settings.socketUrl}
    >
      <PopoverNotificationCenter colorScheme="light" onNotificationClick={(message) => window.HERALD_CLICKS.push(message._id)}>
        {({ unseenCount }) => <NotificationBell unseenCount={unseenCount} />}
      </PopoverNotificationCenter>
    </NovuProvider>
  );
}

createRoot(document.getElementById('root')).render(<App />);
