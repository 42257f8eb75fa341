import { createHooklineClient, HooklineApiError, unwrap } from '@hookline/client';

/** The hand-written part of @hookline/client, without a server: its URL, its key, its errors. */
describe('@hookline/client', () => {
  function recording(): { requests: Request[]; fetch: (request: Request) => Promise<Response> } {
    const requests: Request[] = [];
    return {
      requests,
      fetch: async (request) => {
        requests.push(request);
        return Response.json({ data: [], nextCursor: null });
      },
    };
  }

  it.each([
    'http://hookline.test',
    'http://hookline.test/',
    'http://hookline.test/api/v1/external',
    'http://hookline.test/api/v1/external/',
  ])('adds the API path to %s once and sends the key on every request', async (baseUrl) => {
    const { requests, fetch } = recording();
    const client = createHooklineClient({ baseUrl, apiKey: 'hl_key', headers: { 'X-Trace': 't1' }, fetch });
    await client.GET('/webhooks', { params: { query: { limit: 5 } } });
    expect(requests[0].url).toBe('http://hookline.test/api/v1/external/webhooks?limit=5');
    expect(requests[0].headers.get('x-api-key')).toBe('hl_key');
    expect(requests[0].headers.get('x-trace')).toBe('t1');
  });

  it("sends a portal session's token as a bearer token instead of a key", async () => {
    const { requests, fetch } = recording();
    const client = createHooklineClient({ baseUrl: 'http://hookline.test', portalToken: 'hlp_token', fetch });
    await client.GET('/webhooks');
    expect(requests[0].headers.get('authorization')).toBe('Bearer hlp_token');
    expect(requests[0].headers.has('x-api-key')).toBe(false);
  });

  it('unwrap gives the data of a 2xx', async () => {
    const response = Response.json({ id: 'wh_1' }, { status: 201 });
    await expect(unwrap({ data: { id: 'wh_1' }, response })).resolves.toEqual({ id: 'wh_1' });
  });

  it('unwrap throws a HooklineApiError with one message per refused field', async () => {
    const body = { statusCode: 400, error: 'Bad Request', message: ['url must be an absolute URL', 'events should not be empty'] };
    const response = new Response(JSON.stringify(body), { status: 400, statusText: 'Bad Request' });
    const error = await unwrap({ error: body, response }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HooklineApiError);
    expect(error).toMatchObject({ status: 400, body, response });
    expect((error as HooklineApiError).messages).toEqual(body.message);
    expect((error as HooklineApiError).message).toBe('400 Bad Request: url must be an absolute URL; events should not be empty');
  });

  it('keeps a single message, a text body, and no body at all', () => {
    const single = new HooklineApiError(new Response(null, { status: 409 }), { statusCode: 409, error: 'Conflict', message: 'pending' });
    expect(single.messages).toEqual(['pending']);
    const text = new HooklineApiError(new Response(null, { status: 502, statusText: 'Bad Gateway' }), 'upstream down');
    expect(text).toMatchObject({
      status: 502,
      body: 'upstream down',
      messages: ['upstream down'],
      message: '502 Bad Gateway: upstream down',
    });
    const empty = new HooklineApiError(new Response(null, { status: 503, statusText: 'Service Unavailable' }), '');
    expect(empty).toMatchObject({ messages: [], message: '503 Service Unavailable' });
  });
});
