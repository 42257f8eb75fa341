import { type Listener, portOf, SelfAddress } from './self-address';

const MACHINE = ['127.0.0.1', '::1', '10.1.2.3', 'fe80::a00:27ff:fe4e:66a1%eth0'];

function selfAt(publicUrl: string, listeners: Listener[]): SelfAddress {
  return new SelfAddress(
    publicUrl,
    () => listeners,
    () => MACHINE,
  );
}

describe('portOf', () => {
  it('reads the port, or the default of the scheme', () => {
    expect(portOf(new URL('https://a.example/'))).toBe(443);
    expect(portOf(new URL('http://a.example/'))).toBe(80);
    expect(portOf(new URL('http://a.example:8080/'))).toBe(8080);
  });
});

describe('SelfAddress.isPublicOrigin', () => {
  const self = selfAt('https://hooks.example.com', [{ address: '0.0.0.0', port: 3000 }]);

  it('matches the host of PUBLIC_URL at its port, in any case and with a trailing dot', () => {
    expect(self.isPublicOrigin(new URL('https://hooks.example.com/api/v1/external/deliveries/del_1/retry'))).toBe(true);
    expect(self.isPublicOrigin(new URL('https://HOOKS.example.com.:443/x'))).toBe(true);
  });

  it('matches the other default port too, which a proxy commonly serves beside it', () => {
    expect(self.isPublicOrigin(new URL('http://hooks.example.com/x'))).toBe(true);
  });

  it('leaves other hosts and ports alone', () => {
    expect(self.isPublicOrigin(new URL('https://hooks.example.com:8443/x'))).toBe(false);
    expect(self.isPublicOrigin(new URL('https://shop.example.com/x'))).toBe(false);
    expect(self.isPublicOrigin(new URL('https://example.com/x'))).toBe(false);
  });

  it('takes a port PUBLIC_URL names as the only one', () => {
    const local = selfAt('http://localhost:3000', []);
    expect(local.isPublicOrigin(new URL('http://localhost:3000/x'))).toBe(true);
    expect(local.isPublicOrigin(new URL('http://localhost/x'))).toBe(false);
    expect(local.isPublicOrigin(new URL('https://localhost/x'))).toBe(false);
  });
});

describe('SelfAddress.isListeningAddress', () => {
  it.each(['0.0.0.0', '::', '127.0.0.1', 'localhost', 'hookline.internal'])(
    'takes a server listening on %s to be reached at every local address with its port',
    (address) => {
      const self = selfAt('https://hooks.example.com', [{ address, port: 3000 }]);
      for (const local of [
        '127.0.0.1',
        '127.0.0.2',
        '::1',
        '[::1]',
        '::ffff:127.0.0.1',
        '0.0.0.0',
        '10.1.2.3',
        'fe80::a00:27ff:fe4e:66a1',
      ]) {
        expect([local, self.isListeningAddress(local, 3000)]).toEqual([local, true]);
      }
      expect(self.isListeningAddress('127.0.0.1', 3001)).toBe(false);
      expect(self.isListeningAddress('10.1.2.4', 3000)).toBe(false);
      expect(self.isListeningAddress('93.184.215.14', 3000)).toBe(false);
      expect(self.listensOnPort(3000)).toBe(true);
      expect(self.listensOnPort(443)).toBe(false);
    },
  );

  it('takes a server listening on one address of the machine to be reached there alone', () => {
    const self = selfAt('https://hooks.example.com', [{ address: '10.1.2.3', port: 443 }]);
    expect(self.isListeningAddress('10.1.2.3', 443)).toBe(true);
    expect(self.isListeningAddress('::ffff:10.1.2.3', 443)).toBe(true);
    expect(self.isListeningAddress('127.0.0.1', 443)).toBe(false);
  });

  it('reads the listeners at each check (the server may start listening later)', () => {
    const listeners: Listener[] = [];
    const self = new SelfAddress(
      'https://hooks.example.com',
      () => listeners,
      () => MACHINE,
    );
    expect(self.isListeningAddress('127.0.0.1', 41234)).toBe(false);
    listeners.push({ address: '127.0.0.1', port: 41234 });
    expect(self.isListeningAddress('127.0.0.1', 41234)).toBe(true);
  });

  it('judges no address in something that is not one', () => {
    expect(selfAt('https://hooks.example.com', [{ address: '0.0.0.0', port: 80 }]).isListeningAddress('not-an-ip', 80)).toBe(false);
  });
});
