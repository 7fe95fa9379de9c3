// A visit's origin carried from the page it landed on to the signup form, without a cookie: every
// internal link and the forms of a page repeat the origin the page's own address carries
// (content/signup-attribution.ts), so it reaches the form through any path of clicks, with or
// without JavaScript. A visit without an origin carries nothing, and its pages are the same for
// every reader (and cached as such).
import { createContext, useContext, useMemo, type ReactNode } from 'react';
import { Link, useLocation, type LinkProps } from 'react-router-dom';
import { ATTRIBUTION_PARAMETERS, attributionQuery, carriedAttribution, type SignupAttribution } from '../content/signup-attribution.ts';

const CarriedOrigin = createContext<SignupAttribution>({});

/** Reads the page's address once for the whole page. */
export function CarryOrigin({ children }: { children: ReactNode }) {
  const { pathname, search } = useLocation();
  const carried = useMemo(() => carriedAttribution(new URLSearchParams(search), pathname), [pathname, search]);
  return <CarriedOrigin.Provider value={carried}>{children}</CarriedOrigin.Provider>;
}

export const useCarriedOrigin = () => useContext(CarriedOrigin);

/** A link to one of the site's pages that keeps the visit's origin. */
export function OriginLink({ to, ...props }: Omit<LinkProps, 'to'> & { to: string }) {
  return <Link to={to + attributionQuery(useCarriedOrigin())} {...props} />;
}

/** The visit's origin as hidden fields of a form (the signup form, the archive's search). */
export function OriginFields() {
  const carried = useCarriedOrigin();
  return (
    <>
      {ATTRIBUTION_PARAMETERS.map((name) => (carried[name] === undefined ? null : <input key={name} type="hidden" name={name} value={carried[name]} />))}
    </>
  );
}
