import { EndpointDirectory } from './endpoint-directory';

describe('EndpointDirectory', () => {
  it('answers the ids that are not endpoints of the store, in the order asked, by the registered lookup', async () => {
    const directory = new EndpointDirectory();
    const asked: Array<[string, readonly string[]]> = [];
    directory.register((storeId, ids) => {
      asked.push([storeId, ids]);
      return Promise.resolve(ids.filter((id) => id !== 'wh_b' && id !== 'wh_d'));
    });
    expect(await directory.missing('st_1', ['wh_a', 'wh_b', 'wh_c', 'wh_d'])).toEqual(['wh_b', 'wh_d']);
    expect(asked).toEqual([['st_1', ['wh_a', 'wh_b', 'wh_c', 'wh_d']]]);
  });

  it('fails loudly when no module registered a lookup', async () => {
    await expect(new EndpointDirectory().missing('st_1', ['wh_a'])).rejects.toThrow('no endpoint lookup registered');
  });
});
