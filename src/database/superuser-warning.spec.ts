import { warnIfSuperuser } from './superuser-warning';

describe('warnIfSuperuser', () => {
  it('warns, naming the role and where to read on, when the connection is a superuser’s', async () => {
    const warn = jest.fn();
    expect(await warnIfSuperuser(async () => [{ role: 'postgres', superuser: true }], { warn })).toBe(true);
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/superuser postgres: .*docs\/operations\.md/));
  });

  it('says nothing for a role that is no superuser', async () => {
    const warn = jest.fn();
    expect(await warnIfSuperuser(async () => [{ role: 'hookline', superuser: false }], { warn })).toBe(false);
    expect(warn).not.toHaveBeenCalled();
  });
});
