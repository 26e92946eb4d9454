#include "sylib.h"

int main(){int a=1,b=2,c=3,i=0;float x=1.5f,y=-2.25f;
for(;;){putint(a);putch(32);putint(b);putch(32);putint(c);putch(32);putfloat(x);putch(10);
int i1=i+1; if(i1<4){int t=a;a=b;b=c;c=t;i=i1;float tf=x;x=y;y=tf;} else break;}
int k=0,p=10,q=20,u,v,j;
for(;;){ if(k&1){u=p;v=q;}else{u=q;v=p;} j=k; putint(u);putch(44);putint(v);putch(10);
int j1=j+1; if(j1<3){k=j1;p=v;q=u;} else break;}
return u;}
