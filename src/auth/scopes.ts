/** CONTRACT §4. */
export const SCOPES = ['webhooks:read', 'webhooks:write', 'events:write', 'api-keys:write', 'stores:write'] as const;
export type Scope = (typeof SCOPES)[number];

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'webhooks:read': 'list/get webhooks, event types, events, deliveries',
  'webhooks:write': 'create/update/delete webhooks, test, rotate secret, retry deliveries',
  'events:write': 'publish events over HTTP',
  'api-keys:write': "create, list and revoke its own store's API keys (store administrator)",
  'stores:write': 'create and list stores, create keys in any store (platform administrator)',
};
