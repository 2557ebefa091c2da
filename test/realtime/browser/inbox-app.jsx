// The page the browser test serves from its own origin: Novu's real <Inbox /> from @novu/react 3.19.2 pointed at
// Herald. Settings come from window.HERALD_INBOX, written into the page by the test's static server.
import { createRoot } from 'react-dom/client';
import { Inbox } from '@novu/react';

const settings = window.HERALD_INBOX;
// Clicks on notifications with a redirect are recorded instead of navigating away from the page under test.
window.HERALD_ROUTER_PUSHES = [];

function App() {
  return (
    <Inbox
      applicationIdentifier={settings.applicationIdentifier}
      subscriber={settings.subscriberId}
      backendUrl={settings.backendUrl}
      socketUrl={settings.socketUrl}
      open={true}
      tabs={[
        { label: 'All', filter: { tags: [] } },
        { label: 'News', filter: { tags: ['news'] } },
      ]}
      routerPush={(url) => window.HERALD_ROUTER_PUSHES.push(url)}
    />
  );
}

createRoot(document.getElementById('root')).render(<App />);
