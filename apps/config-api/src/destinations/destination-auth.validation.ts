import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import type { DestinationAuthInput } from '@app/payloads';
import type { ErrorDetail } from '@app/runtime';
import { checkTargetUrl } from '@app/runtime';

/*
 * A webhook destination's `auth` (CONTRACT §11). Every problem names its field (`auth.name`, …) and
 * never quotes a credential back.
 */

/** Headers the service sets itself or that only mean something between two hops (RFC 9110 §7.6.1). */
const RESERVED_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'content-type',
]);
/** An HTTP field name: one RFC 9110 token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A field value that cannot split the request: visible characters, spaces and tabs. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

const PEM_MAX_LENGTH = 65_536;
const TEXT_MAX_LENGTH = 4096;

type Fields = Record<string, unknown>;
type Check = (fields: Fields, problems: ErrorDetail[], allowPrivateTargets: boolean) => Promise<DestinationAuthInput | null>;

function text(fields: Fields, key: string, problems: ErrorDetail[], optional = false, max = TEXT_MAX_LENGTH): string | undefined {
  const value = fields[key];
  if (value === undefined && optional) return undefined;
  if (typeof value !== 'string' || value === '') {
    problems.push({ path: `auth.${key}`, problem: 'must be a non-empty string' });
    return undefined;
  }
  if (value.length > max) {
    problems.push({ path: `auth.${key}`, problem: `must be at most ${max} characters long` });
    return undefined;
  }
  return value;
}

function unknownKeys(fields: Fields, known: string[], problems: ErrorDetail[]): void {
  for (const key of Object.keys(fields)) {
    if (!known.includes(key)) problems.push({ path: `auth.${key.slice(0, 64)}`, problem: `is not a field of this auth type (${known.join(', ')})` });
  }
}

const checkHeader: Check = (fields, problems) => {
  unknownKeys(fields, ['type', 'name', 'value'], problems);
  const name = text(fields, 'name', problems, false, 256);
  const value = text(fields, 'value', problems);
  if (name !== undefined) {
    const lowered = name.toLowerCase();
    if (!TOKEN.test(name)) problems.push({ path: 'auth.name', problem: 'must be an HTTP header name (letters, digits and !#$%&\'*+-.^_`|~)' });
    else if (lowered.startsWith('webhook-')) problems.push({ path: 'auth.name', problem: 'must not be a webhook-* header: the service signs with those' });
    else if (RESERVED_HEADERS.has(lowered)) problems.push({ path: 'auth.name', problem: `must not be ${lowered}: the service or the connection sets it` });
  }
  if (value !== undefined && !FIELD_VALUE.test(value)) problems.push({ path: 'auth.value', problem: 'must not contain line breaks or control characters' });
  const ok = name !== undefined && value !== undefined && !problems.some((problem) => problem.path.startsWith('auth.'));
  return Promise.resolve(ok ? { type: 'header', name, value } : null);
};

const checkOauth2: Check = async (fields, problems, allowPrivateTargets) => {
  unknownKeys(fields, ['type', 'token_url', 'client_id', 'client_secret', 'scope'], problems);
  const tokenUrl = text(fields, 'token_url', problems, false, 2048);
  const clientId = text(fields, 'client_id', problems, false, 1024);
  const clientSecret = text(fields, 'client_secret', problems);
  const scope = text(fields, 'scope', problems, true, 1024);
  if (tokenUrl !== undefined) {
    const problem = await checkTargetUrl(tokenUrl, allowPrivateTargets);
    if (problem) problems.push({ path: 'auth.token_url', problem });
  }
  if (problems.some((problem) => problem.path.startsWith('auth.')) || tokenUrl === undefined || clientId === undefined || clientSecret === undefined) return null;
  return { type: 'oauth2', token_url: tokenUrl, client_id: clientId, client_secret: clientSecret, ...(scope !== undefined ? { scope } : {}) };
};

function certificateOf(pem: string, path: string, problems: ErrorDetail[]): X509Certificate | null {
  try {
    return new X509Certificate(pem);
  } catch {
    problems.push({ path, problem: 'must be a PEM certificate (-----BEGIN CERTIFICATE-----)' });
    return null;
  }
}

/** RSA of 2048 to 4096 bits or EC P-256/P-384 (CONTRACT §11): what TLS clients and servers commonly take. */
const RSA_BITS = { min: 2048, max: 4096 };
const EC_CURVES = new Set(['prime256v1', 'secp384r1']);
const KEY_KINDS = 'an RSA key of 2048 to 4096 bits or an EC key on P-256 or P-384';

/** Null when the key is of an accepted kind and size, else the problem (never quoting the key). */
function keyKindProblem(key: KeyObject): string | null {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa') {
    const bits = details.modulusLength ?? 0;
    return bits >= RSA_BITS.min && bits <= RSA_BITS.max ? null : `must be ${KEY_KINDS} (this RSA key has ${bits} bits)`;
  }
  if (key.asymmetricKeyType === 'ec') {
    return EC_CURVES.has(details.namedCurve ?? '') ? null : `must be ${KEY_KINDS} (this EC key is on ${details.namedCurve ?? 'an unnamed curve'})`;
  }
  return `must be ${KEY_KINDS} (this key is ${key.asymmetricKeyType ?? 'symmetric'})`;
}

const checkMtls: Check = (fields, problems) => {
  unknownKeys(fields, ['type', 'certificate', 'private_key', 'ca'], problems);
  const certificate = text(fields, 'certificate', problems, false, PEM_MAX_LENGTH);
  const privateKey = text(fields, 'private_key', problems, false, PEM_MAX_LENGTH);
  const ca = text(fields, 'ca', problems, true, PEM_MAX_LENGTH);
  const parsed = certificate === undefined ? null : certificateOf(certificate, 'auth.certificate', problems);
  if (ca !== undefined) certificateOf(ca, 'auth.ca', problems);
  if (privateKey !== undefined) {
    try {
      const key = createPrivateKey(privateKey);
      const kindProblem = keyKindProblem(key);
      if (kindProblem) problems.push({ path: 'auth.private_key', problem: kindProblem });
      else if (parsed && !parsed.checkPrivateKey(key)) problems.push({ path: 'auth.private_key', problem: 'does not belong to the certificate' });
    } catch {
      problems.push({ path: 'auth.private_key', problem: 'must be an unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)' });
    }
  }
  if (problems.some((problem) => problem.path.startsWith('auth.')) || certificate === undefined || privateKey === undefined) return Promise.resolve(null);
  return Promise.resolve({ type: 'mtls', certificate, private_key: privateKey, ...(ca !== undefined ? { ca } : {}) });
};

const CHECKS: Record<DestinationAuthInput['type'], Check> = { header: checkHeader, oauth2: checkOauth2, mtls: checkMtls };

/**
 * `auth` as sent: null (none) or one of the three objects. Problems are appended to `problems`; the
 * answer is the checked object, null for none, or undefined when it is wrong.
 */
export async function readDestinationAuth(value: unknown, problems: ErrorDetail[], allowPrivateTargets: boolean): Promise<DestinationAuthInput | null | undefined> {
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    problems.push({ path: 'auth', problem: 'must be an object with a type (header, oauth2 or mtls), or null' });
    return undefined;
  }
  const fields = value as Fields;
  const type = fields.type;
  if (typeof type !== 'string' || !Object.hasOwn(CHECKS, type)) {
    problems.push({ path: 'auth.type', problem: 'must be "header", "oauth2" or "mtls"' });
    return undefined;
  }
  const before = problems.length;
  const auth = await CHECKS[type as DestinationAuthInput['type']](fields, problems, allowPrivateTargets);
  return problems.length > before ? undefined : (auth ?? undefined);
}
