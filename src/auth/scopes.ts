/** The scopes an API key can hold. */
export const SCOPES = ['webhooks:read', 'webhooks:write', 'events:write', 'api-keys:write', 'stores:write', 'portal:write'] as const;
export type Scope = (typeof SCOPES)[number];
