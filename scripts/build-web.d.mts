export function dashboardIsStale(): boolean;
export function buildDashboard(options?: { ifStale?: boolean }): Promise<boolean>;
