public enum PkgToolPlaceholder {}
