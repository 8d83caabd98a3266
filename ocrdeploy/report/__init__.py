"""What a person looks at: the HTML report of `inv verify` and `inv bench`, made from their result documents."""
