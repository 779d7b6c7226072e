package callers

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// JWTOptions says which JWTs identify callers: signed by one of Keys,
// issued by Issuer, for Audience.
type JWTOptions struct {
	// Keys are the issuer's public keys (ParseKeys reads a JWKS file or
	// a PEM key). With more than one, a JWT names its key by "kid".
	Keys *jose.JSONWebKeySet
	// Issuer and Audience must be the JWT's "iss" and one of its "aud".
	Issuer, Audience string
	// Leeway is the clock skew allowed on "exp", "nbf" and "iat"
	// (DefaultLeeway when zero).
	Leeway time.Duration
}

// DefaultLeeway is the clock skew allowed on a JWT's times.
const DefaultLeeway = 30 * time.Second

// signatureAlgorithms are the algorithms a JWT may be signed with: the
// public-key ones. HMAC ("HS256") would need a shared secret, and "none"
// is never accepted.
var signatureAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

type jwtVerifier struct {
	keys             *jose.JSONWebKeySet
	single           any // the one key, when there is one (a JWT may then omit kid)
	issuer, audience string
	leeway           time.Duration
}

func newJWTVerifier(o JWTOptions) (*jwtVerifier, error) {
	switch {
	case o.Keys == nil || len(o.Keys.Keys) == 0:
		return nil, &ConfigError{Key: "jwks_file", Reason: "no keys: give jwks_file (a JWKS, as the issuer publishes it) or key_file (a PEM public key)"}
	case o.Issuer == "":
		return nil, &ConfigError{Key: "issuer", Reason: `missing: the "iss" every JWT must carry ("https://id.example")`}
	case o.Audience == "":
		return nil, &ConfigError{Key: "audience", Reason: `missing: the "aud" every JWT must carry ("toolscout")`}
	}
	v := &jwtVerifier{keys: o.Keys, issuer: o.Issuer, audience: o.Audience, leeway: o.Leeway}
	if v.leeway <= 0 {
		v.leeway = DefaultLeeway
	}
	if len(o.Keys.Keys) == 1 {
		v.single = o.Keys.Keys[0].Key
	}
	return v, nil
}

// verify checks a JWT's signature, issuer, audience and times, and
// returns its claims and expiry. A JWT without "exp" is refused: a
// leaked one would work for ever.
func (v *jwtVerifier) verify(raw string, now time.Time) (map[string]any, time.Time, error) {
	tok, err := jwt.ParseSigned(raw, signatureAlgorithms)
	if err != nil {
		return nil, time.Time{}, err
	}
	var key any = v.keys
	if v.single != nil && len(tok.Headers) == 1 && tok.Headers[0].KeyID == "" {
		key = v.single
	}
	var std jwt.Claims
	var all map[string]any
	if err := tok.Claims(key, &std, &all); err != nil {
		return nil, time.Time{}, err
	}
	if std.Expiry == nil {
		return nil, time.Time{}, errors.New(`no "exp": toolscout accepts JWTs that expire`)
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Issuer: v.issuer, AnyAudience: jwt.Audience{v.audience}, Time: now}, v.leeway); err != nil {
		return nil, time.Time{}, err
	}
	return all, std.Expiry.Time(), nil
}

// ParseKeys reads an issuer's public keys: a JWKS ({"keys": [...]}),
// one JWK, or PEM public keys ("PUBLIC KEY" or a certificate). Private
// and symmetric keys are refused: toolscout only checks signatures.
func ParseKeys(data []byte) (*jose.JSONWebKeySet, error) {
	var set jose.JSONWebKeySet
	if block, _ := pem.Decode(data); block != nil {
		for rest := data; ; {
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			var pub any
			var err error
			switch block.Type {
			case "PUBLIC KEY":
				pub, err = x509.ParsePKIXPublicKey(block.Bytes)
			case "CERTIFICATE":
				var cert *x509.Certificate
				if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
					pub = cert.PublicKey
				}
			default:
				return nil, fmt.Errorf("PEM block %q: give the public key (\"PUBLIC KEY\") or a certificate, never a private key", block.Type)
			}
			if err != nil {
				return nil, fmt.Errorf("PEM block %q: %v", block.Type, err)
			}
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: pub})
		}
	} else {
		if err := json.Unmarshal(data, &set); err != nil {
			return nil, fmt.Errorf("neither PEM nor a JWKS: %v", err)
		}
		if len(set.Keys) == 0 {
			var one jose.JSONWebKey
			if json.Unmarshal(data, &one) == nil && one.Key != nil {
				set.Keys = []jose.JSONWebKey{one}
			}
		}
	}
	if len(set.Keys) == 0 {
		return nil, errors.New(`no keys: a JWKS is {"keys": [{"kty": ..., "kid": ..., ...}]}`)
	}
	for i, k := range set.Keys {
		switch k.Key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		default:
			return nil, fmt.Errorf("key %d (kid %q): %T is no public signing key: give the issuer's RSA, EC or Ed25519 public keys", i, k.KeyID, k.Key)
		}
	}
	return &set, nil
}
